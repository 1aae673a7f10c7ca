package io.etcdmemberagent.kube;

import io.etcdmemberagent.core.ConditionEntry;
import io.etcdmemberagent.core.ConditionStatus;
import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.PodApi;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.PodView;
import io.etcdmemberagent.support.Json;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.V1EventSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodCondition;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.util.PatchUtils;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * {@link PodApi} with the Kubernetes client-java: GET the Pod, strategic merge patch of {@code
 * pods/status} carrying only our conditions and {@code metadata.uid} as a precondition, POST
 * events. Every call has timeouts ({@link KubeClients}).
 */
public final class ClientJavaPodApi implements PodApi {

  private final ApiClient client;
  private final CoreV1Api api;
  private final String namespace;
  private final String podName;
  private final String conditionPrefix;

  private ClientJavaPodApi(ApiClient client, String namespace, String podName, String prefix) {
    this.client = client;
    this.api = new CoreV1Api(client);
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

  /** True when this process runs in a Pod with a service account token. */
  public static boolean inCluster(Map<String, String> env) {
    return env.containsKey("KUBERNETES_SERVICE_HOST")
        && Files.isReadable(BearerTokenFile.IN_CLUSTER);
  }

  @Override
  public PodView read() throws PodApiException {
    try {
      V1Pod pod = api.readNamespacedPod(podName, namespace).execute();
      V1ObjectMeta meta = pod.getMetadata();
      List<ConditionEntry> ours = new ArrayList<>();
      if (pod.getStatus() != null && pod.getStatus().getConditions() != null) {
        for (V1PodCondition c : pod.getStatus().getConditions()) {
          if (c.getType() != null && c.getType().startsWith(conditionPrefix + "/")) {
            ours.add(
                new ConditionEntry(
                    c.getType().substring(conditionPrefix.length() + 1),
                    ConditionStatus.parse(c.getStatus()),
                    String.valueOf(c.getReason()),
                    String.valueOf(c.getMessage()),
                    c.getLastTransitionTime() == null
                        ? Instant.EPOCH
                        : c.getLastTransitionTime().toInstant()));
          }
        }
      }
      long generation = meta.getGeneration() == null ? 0 : meta.getGeneration();
      return new PodView(meta.getUid(), generation, meta.getResourceVersion(), ours);
    } catch (ApiException e) {
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
      PatchUtils.patch(
          V1Pod.class,
          () -> api.patchNamespacedPodStatus(podName, namespace, new V1Patch(body)).buildCall(null),
          V1Patch.PATCH_FORMAT_STRATEGIC_MERGE_PATCH,
          client);
      return new KubeAnswer.Done();
    } catch (ApiException e) {
      return answer(e);
    }
  }

  @Override
  public KubeAnswer createEvent(String uid, PodEvent event) {
    OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
    CoreV1Event body =
        new CoreV1Event()
            .metadata(
                new V1ObjectMeta()
                    .name(podName + "." + UUID.randomUUID().toString().substring(0, 13))
                    .namespace(namespace))
            .involvedObject(
                new V1ObjectReference()
                    .apiVersion("v1")
                    .kind("Pod")
                    .name(podName)
                    .namespace(namespace)
                    .uid(uid))
            .type(event.type())
            .reason(event.reason())
            .message(event.message())
            .source(new V1EventSource().component("etcd-member-agent"))
            .reportingComponent("etcd-member-agent.io/agent")
            .reportingInstance(podName)
            .firstTimestamp(now)
            .lastTimestamp(now)
            .count(1);
    try {
      api.createNamespacedEvent(namespace, body).execute();
      return new KubeAnswer.Done();
    } catch (ApiException e) {
      return answer(e);
    }
  }

  /** 409 conflict; 401 / 429 / 5xx / network retry (honouring Retry-After); other 4xx rejected. */
  static KubeAnswer answer(ApiException e) {
    int code = e.getCode();
    String message = code == 0 ? String.valueOf(e.getMessage()) : code + ": " + statusMessage(e);
    // A patch carrying metadata.uid of a Pod that was re-created under the same name: the real
    // API server answers 422 "metadata.uid: ... field is immutable" (not 409).
    if (code == 409 || (code == 422 && message.contains("metadata.uid"))) {
      return new KubeAnswer.Conflict(message);
    }
    // 401: the token was revoked or expired; its file is re-read on the next call, where the
    // kubelet (or whoever owns it) will have put a fresh one.
    if (code == 0 || code == 401 || code == 429 || code >= 500) {
      return new KubeAnswer.Retry(retryAfter(e.getResponseHeaders()), message);
    }
    return new KubeAnswer.Rejected(code, message);
  }

  /** The API server's own sentence from its Status body (the whole body when it has none). */
  private static String statusMessage(ApiException e) {
    String body = String.valueOf(e.getResponseBody());
    try {
      V1Status status = StatusJson.JSON.deserialize(body, V1Status.class);
      return status != null && status.getMessage() != null ? status.getMessage() : body;
    } catch (RuntimeException notJson) {
      return body;
    }
  }

  /**
   * client-java's JSON registers every model class (about 770) when it is first touched; held here
   * so that {@link #inCluster}, called with Kubernetes off too, does not load them.
   */
  private static final class StatusJson {
    static final JSON JSON = new JSON();
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
    KubeClients.close(client);
  }
}
