package io.etcdmemberagent.kube;

import io.etcdmemberagent.core.access.AccessReviews;
import io.etcdmemberagent.support.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link AccessReviews} as TokenReviews and SubjectAccessReviews, created on the Pod adapter's
 * connection. The agent needs {@code create} on both (the {@code system:auth-delegator} role);
 * without it the API server answers 403, which is a failed review (503 to the caller), not a
 * refused caller. With resource attributes a path {@code /metrics} is asked as {@code get} on
 * {@code etcdmembers/metrics} (the EtcdMember's group, the agent's Pod name, its namespace), as
 * kube-rbac-proxy's {@code resourceAttributes} do, so a namespaced Role grants it; otherwise as the
 * non-resource path.
 */
public final class ClientJavaAccessReviews implements AccessReviews {

  static final String RESOURCE = "etcdmembers";

  private final KubeHttp api;
  private final List<String> audiences;
  private final boolean resourceAttributes;
  private final String namespace;
  private final String podName;
  private final String group;

  public ClientJavaAccessReviews(
      ClientJavaPodApi pods, List<String> audiences, boolean resourceAttributes) {
    this.api = pods.http();
    this.audiences = List.copyOf(audiences);
    this.resourceAttributes = resourceAttributes;
    this.namespace = pods.namespace();
    this.podName = pods.podName();
    this.group = pods.conditionPrefix(); // the EtcdMember's API group, as the Role names it
  }

  @Override
  public TokenAnswer reviewToken(String token) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("token", token);
    if (!audiences.isEmpty()) {
      spec.put("audiences", audiences);
    }
    try {
      Map<?, ?> status = review("authentication.k8s.io", "tokenreviews", "TokenReview", spec);
      if (!Boolean.TRUE.equals(status.get("authenticated"))) {
        Object error = status.get("error");
        return new TokenAnswer.Rejected(error == null ? "not authenticated" : error.toString());
      }
      Map<?, ?> user = KubeJson.map(status.get("user"));
      return new TokenAnswer.Authenticated(
          new Identity(
              KubeJson.text(user.get("username")),
              user.get("uid") == null ? "" : KubeJson.text(user.get("uid")),
              strings(user.get("groups")),
              extra(user.get("extra"))));
    } catch (KubeCallException e) {
      return new TokenAnswer.Failed(failure(e, "tokenreviews"));
    }
  }

  @Override
  public PermissionAnswer reviewAccess(Identity who, String path, String verb) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("user", who.user());
    if (!who.uid().isEmpty()) {
      spec.put("uid", who.uid());
    }
    spec.put("groups", who.groups());
    if (!who.extra().isEmpty()) {
      spec.put("extra", who.extra());
    }
    if (resourceAttributes) {
      Map<String, Object> attributes = new LinkedHashMap<>();
      attributes.put("namespace", namespace);
      attributes.put("verb", verb);
      attributes.put("group", group);
      attributes.put("resource", RESOURCE);
      attributes.put("subresource", path.startsWith("/") ? path.substring(1) : path);
      attributes.put("name", podName);
      spec.put("resourceAttributes", attributes);
    } else {
      spec.put("nonResourceAttributes", Map.of("path", path, "verb", verb));
    }
    try {
      Map<?, ?> status =
          review("authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", spec);
      if (Boolean.TRUE.equals(status.get("allowed"))) {
        return new PermissionAnswer.Allowed();
      }
      Object reason = status.get("reason");
      Object evaluationError = status.get("evaluationError");
      if (reason == null && evaluationError != null) {
        // no authorizer decided and one of them failed: not a refusal the caller earned
        return new PermissionAnswer.Failed(evaluationError.toString());
      }
      String why = reason == null ? "" : reason.toString();
      if (why.isEmpty() && resourceAttributes) {
        why =
            "a Role in namespace "
                + namespace
                + " must grant get on "
                + RESOURCE
                + "/"
                + path.substring(path.startsWith("/") ? 1 : 0)
                + " ("
                + group
                + ")";
      }
      return new PermissionAnswer.Denied(why);
    } catch (KubeCallException e) {
      return new PermissionAnswer.Failed(failure(e, "subjectaccessreviews"));
    }
  }

  /** Creates a review ({@code group}/v1 {@code resource}) and returns its {@code status}. */
  private Map<?, ?> review(String group, String resource, String kind, Map<String, Object> spec)
      throws KubeCallException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("apiVersion", group + "/v1");
    body.put("kind", kind);
    body.put("spec", spec);
    return KubeJson.map(api.create(Json.write(body), "apis", group, "v1", resource).get("status"));
  }

  private static String failure(KubeCallException e, String resource) {
    String text = e.getMessage().length() > 300 ? e.getMessage().substring(0, 300) : e.getMessage();
    if (e.code() == 403) {
      return "the agent may not create "
          + resource
          + " (bind its ServiceAccount to system:auth-delegator): "
          + text;
    }
    return e.code() == 0 ? "no answer from the API server: " + text : "HTTP " + text;
  }

  private static List<String> strings(Object o) {
    List<String> out = new ArrayList<>();
    if (o != null) {
      for (Object x : KubeJson.list(o)) {
        out.add(KubeJson.text(x));
      }
    }
    return out;
  }

  private static Map<String, List<String>> extra(Object o) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    if (o != null) {
      KubeJson.map(o).forEach((k, v) -> out.put(k.toString(), strings(v)));
    }
    return out;
  }
}
