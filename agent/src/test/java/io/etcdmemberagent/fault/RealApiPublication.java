package io.etcdmemberagent.fault;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The real kube-apiserver: a namespace of its own with the chart's ServiceAccount, Role and
 * RoleBinding, the Pod {@link FaultRig#POD} with the chart's readiness gate, and the agent holding
 * a ServiceAccount token. The token is bound to a Secret, not to the Pod as the kubelet binds it:
 * the suite replaces the Pod under a running agent (a StatefulSet reusing the name), which on a
 * node would have restarted the agent with a new token. What the agent wrote is read back from the
 * server's audit log, which records every write of a Pod or its status with the object after it.
 */
final class RealApiPublication implements Publication {

  private static final AtomicInteger NAMESPACES = new AtomicInteger();

  private final KubeControlPlane kube;
  private final KubePods pods;
  private final List<String> flags;
  private final Instant wallAtStart = Instant.now();
  private final long nanosAtStart = System.nanoTime();

  /**
   * @param server the API server's address as the agent reaches it
   */
  RealApiPublication(KubeControlPlane kube, Path dir, String server) {
    this.kube = kube;
    this.pods =
        new KubePods(kube, "fault-" + NAMESPACES.incrementAndGet(), "etcd").withChartRbac(dir);
    pods.createPod(FaultRig.POD);
    String secret = "agent-token-anchor";
    Path token =
        pods.tokenFile(
            dir.resolve("agent.token"),
            KubePods.boundTo("Secret", secret, pods.createSecret(secret)));
    this.flags =
        List.of(
            "--kube=on",
            "--kubeconfig=" + kube.tokenKubeconfig(dir.resolve("agent.kubeconfig"), server, token),
            "--pod-name=" + FaultRig.POD,
            "--pod-namespace=" + pods.namespace());
  }

  @Override
  public List<String> agentFlags() {
    return flags;
  }

  @Override
  public JsonArray conditions() {
    return pods.conditions(FaultRig.POD);
  }

  /**
   * From the audit log: the Pod's conditions after each write by anyone (creating the Pod, a status
   * patch or update), and for each successful status patch by the agent's ServiceAccount, the
   * conditions before and after it.
   */
  @Override
  public List<StatusWrite> agentPatches() {
    String agent = "system:serviceaccount:" + pods.namespace() + ":" + pods.serviceAccount();
    List<StatusWrite> out = new ArrayList<>();
    JsonArray current = new JsonArray();
    for (JsonObject e : kube.audit()) {
      JsonObject ref = e.getAsJsonObject("objectRef");
      if (ref == null
          || !pods.namespace().equals(string(ref, "namespace"))
          || !"pods".equals(string(ref, "resource"))
          || !FaultRig.POD.equals(string(ref, "name"))
          || !e.has("responseObject")
          || e.getAsJsonObject("responseStatus").get("code").getAsInt() >= 300) {
        continue;
      }
      JsonObject status = e.getAsJsonObject("responseObject").getAsJsonObject("status");
      JsonArray after =
          status != null && status.has("conditions")
              ? status.getAsJsonArray("conditions")
              : new JsonArray();
      boolean agentPatch =
          "patch".equals(string(e, "verb"))
              && "status".equals(string(ref, "subresource"))
              && agent.equals(e.getAsJsonObject("user").get("username").getAsString());
      if (agentPatch) {
        out.add(new StatusWrite(nanos(string(e, "requestReceivedTimestamp")), current, after));
      }
      current = after;
    }
    return out;
  }

  private long nanos(String timestamp) {
    return nanosAtStart + Duration.between(wallAtStart, Instant.parse(timestamp)).toNanos();
  }

  private static String string(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e == null || e.isJsonNull() ? null : e.getAsString();
  }

  @Override
  public List<JsonObject> events() {
    return pods.events();
  }

  @Override
  public void replacePod() {
    pods.deletePod(FaultRig.POD);
    pods.createPod(FaultRig.POD);
  }

  @Override
  public void removeCondition(String type) {
    JsonArray kept = new JsonArray();
    for (JsonElement c : conditions()) {
      if (!c.getAsJsonObject().get("type").getAsString().equals(type)) {
        kept.add(c);
      }
    }
    JsonObject status = new JsonObject();
    status.add("conditions", kept);
    JsonObject body = new JsonObject();
    body.add("status", status);
    // a JSON merge patch replaces the whole list: the condition is gone, the others stay
    var answer =
        kube.admin()
            .patch(
                "/api/v1/namespaces/" + pods.namespace() + "/pods/" + FaultRig.POD + "/status",
                "application/merge-patch+json",
                body.toString());
    if (!answer.ok()) {
      throw new IllegalStateException("removing " + type + ": " + answer);
    }
  }

  /** Stops the API server (SIGTERM); {@link #startApiServer} brings it back on the same port. */
  void stopApiServer() {
    kube.stopApiServer();
  }

  void startApiServer() {
    kube.startApiServer();
  }

  @Override
  public void close() {
    // the namespace stays with the shared control plane, which ends with the JVM
  }
}
