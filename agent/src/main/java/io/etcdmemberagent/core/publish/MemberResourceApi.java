package io.etcdmemberagent.core.publish;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.join.JoinRecord;
import java.util.List;
import java.util.Optional;

/**
 * The Kubernetes calls behind this member's EtcdMember (named after its Pod, in its namespace),
 * each with a timeout. Reads throw {@link PodApi.PodApiException} carrying the server's answer.
 */
public interface MemberResourceApi extends AutoCloseable {

  /** Whether the API server serves the EtcdMember resource (its CRD is installed). */
  boolean served() throws PodApi.PodApiException;

  /** The object, or empty when there is none. */
  Optional<MemberResourceView> read() throws PodApi.PodApiException;

  /** Who owns the Pod (its StatefulSet), to own the EtcdMember too; empty when nobody does. */
  Optional<ResourceOwner> podOwner() throws PodApi.PodApiException;

  /** Creates the object (an empty spec), owned by {@code owner} when there is one. */
  KubeAnswer create(Optional<ResourceOwner> owner);

  /** Merge patch of the status subresource with the whole status the agent owns. */
  KubeAnswer patchStatus(MemberStatusDocument status, long observedGeneration);

  /** Merge patch of {@code status.join} only (the rest of the status is the agent's). */
  KubeAnswer patchJoin(JoinRecord join);

  @Override
  void close();

  /** An existing EtcdMember, as far as the agent reads it back. */
  record MemberResourceView(
      String uid,
      long generation,
      List<MemberTransition> transitions,
      List<ConditionEntry> conditions) {
    public MemberResourceView {
      transitions = List.copyOf(transitions);
      conditions = List.copyOf(conditions);
    }
  }

  /** An owner reference: the Pod's controller (a StatefulSet). */
  record ResourceOwner(String apiVersion, String kind, String name, String uid) {}
}
