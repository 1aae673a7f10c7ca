package io.etcdmemberagent.app.join;

import io.etcdmemberagent.app.publish.MemberObject;
import io.etcdmemberagent.config.JoinConfig;
import io.etcdmemberagent.config.KubeSettings;
import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.join.JoinRecord;
import io.etcdmemberagent.core.publish.MemberResourceApi;
import io.etcdmemberagent.core.publish.PodApi.PodApiException;
import io.etcdmemberagent.kube.ClientJavaMemberResourceApi;
import io.etcdmemberagent.kube.ClientJavaPodApi;
import io.etcdmemberagent.support.EventLog;
import java.io.IOException;
import java.util.Map;

/**
 * Records {@code join}'s decision in the member's EtcdMember ({@code status.join}), best effort:
 * every call has the Kubernetes timeout, and after the first failure (or when the CRD is not
 * served) it says why once and records nothing more, so Kubernetes never holds up or fails a join.
 */
final class JoinRecorder implements AutoCloseable {

  private final MemberResourceApi api;
  private final boolean required;
  private final String resource;
  private boolean disabled;
  private boolean ensured;
  private String lastDecision = "";

  JoinRecorder(MemberResourceApi api, boolean required, String resource) {
    this.api = api;
    this.required = required;
    this.resource = resource;
  }

  /**
   * A recorder when Kubernetes is there ({@code --kube}) and the EtcdMember is wanted ({@code
   * --member-resource}); null otherwise, or when the client cannot be set up (said once).
   */
  static JoinRecorder connect(JoinConfig config, Map<String, String> env) {
    KubeSettings k = config.kube();
    boolean available = k.kubeconfig().isPresent() || ClientJavaPodApi.inCluster(env);
    if (k.mode().equals("off") || k.memberResource().equals("off") || !available) {
      return null;
    }
    if (k.podNamespace().isEmpty()) {
      EventLog.warn(
          "join-not-recorded",
          "detail",
          "no namespace: set --pod-namespace or $POD_NAMESPACE (downward API)");
      return null;
    }
    String resource = ClientJavaMemberResourceApi.PLURAL + "." + k.conditionPrefix();
    try {
      return new JoinRecorder(
          ClientJavaMemberResourceApi.connect(
              k.kubeconfig(),
              k.conditionPrefix(),
              k.podNamespace().get(),
              k.podName().orElse(config.name()),
              k.timeout()),
          k.memberResource().equals("on"),
          resource);
    } catch (IOException | RuntimeException e) {
      EventLog.warn("join-not-recorded", "detail", "cannot set up the Kubernetes client: " + e);
      return null;
    }
  }

  /** Writes the record unless it repeats the previous decision (a wait that goes on). */
  void record(JoinRecord join) {
    if (disabled || join.decision().equals(lastDecision) && join.decision().startsWith("Wait")) {
      return;
    }
    if (!ensured && !ensure()) {
      disabled = true;
      return;
    }
    KubeAnswer answer = api.patchJoin(join);
    if (answer instanceof KubeAnswer.Done) {
      lastDecision = join.decision();
      EventLog.info("join-recorded", "resource", resource, "decision", join.decision());
    } else {
      giveUp("etcdmembers/status patch", answer.toString());
    }
  }

  private boolean ensure() {
    try {
      if (!api.served()) {
        String why = "the API server does not serve " + resource + "/v1alpha1: not recorded";
        if (required) {
          EventLog.error("kube-refused", "call", "etcdmembers discovery", "detail", why);
        } else {
          EventLog.info("member-resource-not-served", "detail", why);
        }
        return false;
      }
    } catch (PodApiException e) {
      giveUp("etcdmembers discovery", e.answer().toString());
      return false;
    }
    MemberObject.Found found = MemberObject.findOrCreate(api);
    if (found instanceof MemberObject.Failed f) {
      giveUp(f.call(), f.answer().toString());
      return false;
    }
    ensured = true;
    return true;
  }

  private void giveUp(String call, String detail) {
    disabled = true;
    EventLog.warn(
        "join-not-recorded",
        "call",
        call,
        "detail",
        detail,
        "effect",
        "the join goes on; its decision is only in this log");
  }

  @Override
  public void close() {
    api.close();
  }
}
