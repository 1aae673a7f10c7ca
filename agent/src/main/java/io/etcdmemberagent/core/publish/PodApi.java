package io.etcdmemberagent.core.publish;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.PodEvent;
import java.util.List;

/** The Kubernetes calls the agent makes, all about its own Pod, each with a timeout. */
public interface PodApi extends AutoCloseable {

  /** Reads the Pod; throws {@link PodApiException} when it cannot. */
  PodView read() throws PodApiException;

  /** Strategic merge patch of {@code pods/status} with our entries, {@code uid} as precondition. */
  KubeAnswer patchConditions(String uid, long observedGeneration, List<ConditionEntry> entries);

  KubeAnswer createEvent(String uid, PodEvent event);

  @Override
  void close();

  /** Reading the Pod failed; {@code answer} says how. */
  final class PodApiException extends Exception {
    private final KubeAnswer answer;

    public PodApiException(KubeAnswer answer) {
      super(answer.toString());
      this.answer = answer;
    }

    public KubeAnswer answer() {
      return answer;
    }
  }
}
