package io.etcdmemberagent.kube;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.publish.ConditionEntry;
import io.etcdmemberagent.core.publish.ConditionStatus;
import io.etcdmemberagent.core.publish.PodApi;
import io.etcdmemberagent.core.publish.PodView;
import io.etcdmemberagent.support.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * {@link PodApi} on client-java's kubeconfig and credentials ({@link KubeClients}): GET the Pod,
 * strategic merge patch of {@code pods/status} carrying only our conditions and {@code
 * metadata.uid} as a precondition, POST events. Every call has timeouts.
 */
public final class ClientJavaPodApi implements PodApi {

  private final KubeHttp api;
  private final String namespace;
  private final String podName;
  private final String conditionPrefix;

  private ClientJavaPodApi(KubeHttp api, String namespace, String podName, String prefix) {
    this.api = api;
    this.namespace = namespace;
    this.podName = podName;
    this.conditionPrefix = prefix;
  }

  /** In-cluster (service account) when {@code kubeconfig} is empty, else from that file. */
  public static ClientJavaPodApi connect(
      Optional<Path> kubeconfig, String namespace, String podName, String prefix, Duration timeout)
      throws IOException {
    return new ClientJavaPodApi(
        KubeClients.connect(kubeconfig, timeout), namespace, podName, prefix);
  }

  KubeHttp http() {
    return api;
  }

  String namespace() {
    return namespace;
  }

  String conditionPrefix() {
    return conditionPrefix;
  }

  String podName() {
    return podName;
  }

  /** True when this process runs in a Pod with a service account token. */
  public static boolean inCluster(Map<String, String> env) {
    return env.containsKey("KUBERNETES_SERVICE_HOST")
        && Files.isReadable(BearerTokenFile.IN_CLUSTER);
  }

  @Override
  public PodView read() throws PodApiException {
    try {
      Map<?, ?> pod = api.get("api", "v1", "namespaces", namespace, "pods", podName);
      Map<?, ?> meta = KubeJson.map(pod.get("metadata"));
      List<ConditionEntry> ours = new ArrayList<>();
      for (Object o : KubeJson.list(KubeJson.map(pod.get("status")).get("conditions"))) {
        Map<?, ?> c = KubeJson.map(o);
        String type = KubeJson.text(c.get("type"));
        if (type.startsWith(conditionPrefix + "/")) {
          ours.add(
              new ConditionEntry(
                  type.substring(conditionPrefix.length() + 1),
                  ConditionStatus.parse(KubeJson.text(c.get("status"))),
                  String.valueOf(c.get("reason")),
                  String.valueOf(c.get("message")),
                  KubeJson.instant(c.get("lastTransitionTime"))));
        }
      }
      return new PodView(
          KubeJson.text(meta.get("uid")),
          KubeJson.number(meta.get("generation")),
          KubeJson.text(meta.get("resourceVersion")),
          ours);
    } catch (KubeCallException e) {
      throw new PodApiException(answer(e));
    }
  }

  @Override
  public KubeAnswer patchConditions(
      String uid, long observedGeneration, List<ConditionEntry> entries) {
    List<Map<String, Object>> conditions = new ArrayList<>();
    for (ConditionEntry e : entries) {
      Map<String, Object> c = new LinkedHashMap<>();
      c.put("type", conditionPrefix + "/" + e.name());
      c.put("status", e.status().text());
      c.put("reason", e.reason());
      c.put("message", e.message());
      c.put(
          "lastTransitionTime", e.lastTransitionTime().truncatedTo(ChronoUnit.SECONDS).toString());
      if (observedGeneration > 0) {
        c.put("observedGeneration", observedGeneration);
      }
      conditions.add(c);
    }
    String body =
        Json.write(
            Map.of("metadata", Map.of("uid", uid), "status", Map.of("conditions", conditions)));
    try {
      api.send(
          "PATCH",
          KubeHttp.STRATEGIC_MERGE_PATCH,
          body,
          "api",
          "v1",
          "namespaces",
          namespace,
          "pods",
          podName,
          "status");
      return new KubeAnswer.Done();
    } catch (KubeCallException e) {
      return answer(e);
    }
  }

  @Override
  public KubeAnswer createEvent(String uid, PodEvent event) {
    return postEvent(
        api,
        namespace,
        podName,
        Map.of(
            "apiVersion", "v1",
            "kind", "Pod",
            "name", podName,
            "namespace", namespace,
            "uid", uid),
        event);
  }

  /** POSTs an Event about {@code involvedObject}, reported by this agent's Pod. */
  static KubeAnswer postEvent(
      KubeHttp api,
      String namespace,
      String reportingPod,
      Map<String, String> involvedObject,
      PodEvent event) {
    String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("apiVersion", "v1");
    body.put("kind", "Event");
    body.put(
        "metadata",
        Map.of(
            "name",
            involvedObject.get("name") + "." + UUID.randomUUID().toString().substring(0, 13),
            "namespace",
            namespace));
    body.put("involvedObject", involvedObject);
    body.put("type", event.type());
    body.put("reason", event.reason());
    body.put("message", event.message());
    body.put("source", Map.of("component", "etcd-member-agent"));
    body.put("reportingComponent", "etcd-member-agent.io/agent");
    body.put("reportingInstance", reportingPod);
    body.put("firstTimestamp", now);
    body.put("lastTimestamp", now);
    body.put("count", 1);
    try {
      api.send(
          "POST", KubeHttp.JSON, Json.write(body), "api", "v1", "namespaces", namespace, "events");
      return new KubeAnswer.Done();
    } catch (KubeCallException e) {
      return answer(e);
    }
  }

  /** 409 conflict; 401 / 429 / 5xx / network retry (honouring Retry-After); other 4xx rejected. */
  static KubeAnswer answer(KubeCallException e) {
    int code = e.code();
    String message = code == 0 ? e.body() : code + ": " + statusMessage(e.body());
    // A patch carrying metadata.uid of a Pod that was re-created under the same name: the real
    // API server answers 422 "metadata.uid: ... field is immutable" (not 409).
    if (code == 409 || (code == 422 && message.contains("metadata.uid"))) {
      return new KubeAnswer.Conflict(message);
    }
    // 401: the token was revoked or expired; its file is re-read on the next call, where the
    // kubelet (or whoever owns it) will have put a fresh one.
    if (code == 0 || code == 401 || code == 429 || code >= 500) {
      return new KubeAnswer.Retry(retryAfter(e.headers()), message);
    }
    return new KubeAnswer.Rejected(code, message);
  }

  /** The API server's own sentence from its Status body (the whole body when it has none). */
  private static String statusMessage(String body) {
    Object message = KubeJson.object(body).get("message");
    return message instanceof String m ? m : body;
  }

  private static Duration retryAfter(Map<String, List<String>> headers) {
    if (headers == null) {
      return Duration.ZERO;
    }
    for (Map.Entry<String, List<String>> h : headers.entrySet()) {
      if ("retry-after".equalsIgnoreCase(h.getKey()) && !h.getValue().isEmpty()) {
        try {
          return Duration.ofSeconds(Long.parseLong(h.getValue().get(0).trim()));
        } catch (NumberFormatException ignored) {
          return Duration.ZERO;
        }
      }
    }
    return Duration.ZERO;
  }

  @Override
  public void close() {
    api.close();
  }
}
