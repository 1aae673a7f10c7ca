package io.etcdmemberagent.testing;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.marcnuri.helm.Helm;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Arranges Pods on a real API server the way the agent meets them: the chart's own ServiceAccount,
 * Role and RoleBinding (rendered by helm-java, applied server-side), Pods that use that account and
 * carry the chart's readiness gate, and the conditions other owners (the kubelet, another
 * controller) have already written.
 */
public final class KubePods {

  public static final Path CHART = Path.of("..", "charts", "etcd-member-agent");
  public static final String PREFIX = "etcd-member-agent.io/";

  private final KubeControlPlane kube;
  private final String namespace;
  private final String release;

  public KubePods(KubeControlPlane kube, String namespace, String release) {
    this.kube = kube;
    this.namespace = namespace;
    this.release = release;
  }

  public String namespace() {
    return namespace;
  }

  /** The chart's ServiceAccount name (the release name). */
  public String serviceAccount() {
    return release;
  }

  /** The chart's Role name. */
  public String role() {
    return release + "-agent";
  }

  /**
   * Creates the namespace and applies the chart's ServiceAccount, the agent's Role and its
   * RoleBinding to it.
   */
  public KubePods withChartRbac(Path dir) {
    kube.createNamespace(namespace);
    String manifest =
        new Helm(CHART)
            .template()
            .withName(release)
            .withNamespace(namespace)
            .withKubeVersion(kube.version().substring(1))
            // helm-java's template asks a server for lookup(): name the serving pair instead
            .set("agent.https.secret", "unused")
            .call();
    List<String> rbac = new ArrayList<>();
    for (String doc : manifest.split("(?m)^---\\s*$")) {
      // the agent's own: not the metrics-reader Role, which is for its readers
      if (doc.matches("(?s).*\\nkind: (ServiceAccount|Role|RoleBinding)\\n.*")
          && !doc.contains("-metrics-reader\n")) {
        rbac.add(doc);
      }
    }
    if (rbac.size() != 3) {
      throw new IllegalStateException("the chart rendered " + rbac.size() + " RBAC objects");
    }
    Path file = dir.resolve(namespace + "-rbac.yaml");
    try {
      Files.writeString(file, String.join("\n---\n", rbac));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    kube.kubectl("apply", "--server-side", "-n", namespace, "-f", file.toString());
    return this;
  }

  /** Creates a Pod (using the chart's ServiceAccount, with its readiness gate); returns its UID. */
  public String createPod(String name) {
    String pod =
        """
        {"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},
         "spec":{"serviceAccountName":"%s","automountServiceAccountToken":false,
                 "containers":[{"name":"etcd","image":"registry.k8s.io/etcd:3.6.16-0"},
                               {"name":"agent","image":"etcd-member-agent:test"}],
                 "readinessGates":[{"conditionType":"%sready"}]}}
        """
            .formatted(name, serviceAccount(), PREFIX);
    return kube.admin()
        .postJson(podsPath(), pod)
        .getAsJsonObject("metadata")
        .get("uid")
        .getAsString();
  }

  /**
   * Creates the Pod and returns the agent's flags to publish to it as the chart's ServiceAccount,
   * with a token bound to that Pod (as the kubelet projects it) in a kubeconfig's {@code
   * tokenFile}.
   */
  public List<String> agentFlagsFor(String pod, Path dir) {
    return agentFlagsFor(pod, dir, kube.url());
  }

  /** As {@link #agentFlagsFor(String, Path)}, with the API server at {@code server}. */
  public List<String> agentFlagsFor(String pod, Path dir, String server) {
    String uid = createPod(pod);
    Path token = tokenFile(dir.resolve(pod + ".token"), boundTo("Pod", pod, uid));
    Path kubeconfig = kube.tokenKubeconfig(dir.resolve(pod + ".kubeconfig"), server, token);
    return List.of(
        "--kube=on",
        "--kubeconfig=" + kubeconfig,
        "--pod-name=" + pod,
        "--pod-namespace=" + namespace);
  }

  /** Deletes a Pod at once (grace period 0) and waits until it is gone. */
  public void deletePod(String name) {
    kube.admin()
        .send("DELETE", podsPath() + "/" + name, "application/json", "{\"gracePeriodSeconds\":0}");
    Poll.until(
        name + " deleted",
        java.time.Duration.ofSeconds(20),
        () -> kube.admin().get(podsPath() + "/" + name).status() == 404);
  }

  /**
   * What the kubelet writes first: PodScheduled, and Ready/ContainersReady False; plus a foreign
   * one.
   */
  public void seedForeignConditions(String name) {
    String now =
        java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    String body =
        """
        {"status":{"conditions":[
          {"type":"PodScheduled","status":"True","lastTransitionTime":"%1$s"},
          {"type":"Ready","status":"False","reason":"ContainersNotReady","lastTransitionTime":"%1$s"},
          {"type":"ContainersReady","status":"False","reason":"ContainersNotReady","lastTransitionTime":"%1$s"},
          {"type":"example.com/other","status":"True","reason":"Theirs","message":"not ours","lastTransitionTime":"%1$s"}]}}
        """
            .formatted(now);
    var answer = kube.admin().patchPodStatus(namespace, name, body);
    if (!answer.ok()) {
      throw new IllegalStateException("seeding conditions: " + answer);
    }
  }

  public JsonObject pod(String name) {
    return kube.admin().getJson(podsPath() + "/" + name);
  }

  public String uid(String name) {
    return pod(name).getAsJsonObject("metadata").get("uid").getAsString();
  }

  /** {@code status.conditions} of the Pod as the server stores it (empty when none). */
  public JsonArray conditions(String name) {
    JsonObject status = pod(name).getAsJsonObject("status");
    return status != null && status.has("conditions")
        ? status.getAsJsonArray("conditions")
        : new JsonArray();
  }

  /** One condition by its full type, or null. */
  public static JsonObject condition(JsonArray conditions, String type) {
    for (JsonElement e : conditions) {
      if (e.getAsJsonObject().get("type").getAsString().equals(type)) {
        return e.getAsJsonObject();
      }
    }
    return null;
  }

  /** A field of one of our conditions ({@code name} without the prefix), or null. */
  public static String field(JsonArray conditions, String name, String field) {
    return field(conditions, name, field, PREFIX);
  }

  /** A field of a condition with another prefix (e.g. {@code "example.com/"}), or null. */
  public static String field(JsonArray conditions, String name, String field, String prefix) {
    JsonObject c = condition(conditions, prefix + name);
    return c == null || !c.has(field) ? null : c.get(field).getAsString();
  }

  /** The reasons of the events in the namespace, oldest first. */
  public List<String> eventReasons() {
    return events().stream().map(e -> e.get("reason").getAsString()).toList();
  }

  /** The events in the namespace as the server stores them. */
  public List<JsonObject> events() {
    List<JsonObject> out = new ArrayList<>();
    for (JsonElement e :
        kube.admin()
            .getJson("/api/v1/namespaces/" + namespace + "/events")
            .getAsJsonArray("items")) {
      out.add(e.getAsJsonObject());
    }
    return out;
  }

  /** A ServiceAccount token of the chart's account, bound to {@code boundObject} when given. */
  public Path tokenFile(Path file, JsonObject boundObject) {
    String token =
        kube.token(namespace, serviceAccount(), java.time.Duration.ofHours(1), boundObject);
    try {
      Path tmp = file.resolveSibling(file.getFileName() + ".new");
      Files.writeString(tmp, token);
      // Replaced in one step, as the kubelet swaps a projected volume's files.
      return Files.move(
          tmp,
          file,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A bound-object reference for a TokenRequest: deleting the object revokes the token. */
  public static JsonObject boundTo(String kind, String name, String uid) {
    JsonObject ref = new JsonObject();
    ref.addProperty("apiVersion", "v1");
    ref.addProperty("kind", kind);
    ref.addProperty("name", name);
    ref.addProperty("uid", uid);
    return ref;
  }

  /** Creates a Secret to bind tokens to; returns its UID. */
  public String createSecret(String name) {
    return kube.admin()
        .postJson(
            "/api/v1/namespaces/" + namespace + "/secrets",
            "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"" + name + "\"}}")
        .getAsJsonObject("metadata")
        .get("uid")
        .getAsString();
  }

  public void deleteSecret(String name) {
    var a = kube.admin().delete("/api/v1/namespaces/" + namespace + "/secrets/" + name);
    if (!a.ok()) {
      throw new IllegalStateException("delete secret " + name + ": " + a);
    }
  }

  private String podsPath() {
    return "/api/v1/namespaces/" + namespace + "/pods";
  }
}
