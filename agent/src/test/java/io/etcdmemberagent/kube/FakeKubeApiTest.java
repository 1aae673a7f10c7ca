package io.etcdmemberagent.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The stand-in itself against Kubernetes' documented strategic-merge behaviour for conditions. */
class FakeKubeApiTest {

  static final String SMP = "application/strategic-merge-patch+json";
  final FakeKubeApi api = new FakeKubeApi();
  final String uid = api.createPod("ns", "etcd-0");
  final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void close() {
    api.close();
  }

  HttpResponse<String> send(
      String method, String path, String contentType, String body, boolean auth) throws Exception {
    HttpRequest.Builder r =
        HttpRequest.newBuilder(URI.create(api.url() + path))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (contentType != null) {
      r.header("Content-Type", contentType);
    }
    if (auth) {
      r.header("Authorization", "Bearer " + FakeKubeApi.TOKEN);
    }
    return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> patch(String contentType, String body) throws Exception {
    return send("PATCH", "/api/v1/namespaces/ns/pods/etcd-0/status", contentType, body, true);
  }

  static String ours(String uid, String status, String reason) {
    return "{\"metadata\":{\"uid\":\""
        + uid
        + "\"},\"status\":{\"conditions\":[{\"type\":\"x.io/ready\","
        + "\"status\":\""
        + status
        + "\",\"reason\":\""
        + reason
        + "\",\"message\":\"m\"}]}}";
  }

  JsonObject byType(String type) {
    JsonArray conditions = api.conditions("ns", "etcd-0");
    for (var e : conditions) {
      if (e.getAsJsonObject().get("type").getAsString().equals(type)) {
        return e.getAsJsonObject();
      }
    }
    return null;
  }

  @Test
  void oursAreMergedByTypeOthersKeptNoDuplicates() throws Exception {
    assertThat(patch(SMP, ours(uid, "False", "Starting")).statusCode()).isEqualTo(200);
    assertThat(patch(SMP, ours(uid, "True", "Ready")).statusCode()).isEqualTo(200);
    JsonArray conditions = api.conditions("ns", "etcd-0");
    assertThat(conditions).hasSize(3);
    assertThat(byType("x.io/ready").get("reason").getAsString()).isEqualTo("Ready");
    assertThat(byType("Ready").get("status").getAsString()).isEqualTo("False");
    assertThat(byType("ContainersReady")).isNotNull();
  }

  @Test
  void aLeftOutFieldKeepsItsValueAndNullDeletesIt() throws Exception {
    patch(SMP, ours(uid, "True", "Ready"));
    patch(SMP, "{\"status\":{\"conditions\":[{\"type\":\"x.io/ready\",\"status\":\"False\"}]}}");
    assertThat(byType("x.io/ready").get("reason").getAsString()).isEqualTo("Ready");
    patch(SMP, "{\"status\":{\"conditions\":[{\"type\":\"x.io/ready\",\"reason\":null}]}}");
    assertThat(byType("x.io/ready").has("reason")).isFalse();
    assertThat(byType("x.io/ready").get("status").getAsString()).isEqualTo("False");
  }

  @Test
  void otherPatchTypesAre415() throws Exception {
    assertThat(patch("application/merge-patch+json", ours(uid, "True", "Ready")).statusCode())
        .isEqualTo(415);
    assertThat(patch("application/json", ours(uid, "True", "Ready")).statusCode()).isEqualTo(415);
  }

  @Test
  void aDifferentUidIs422WithAStatusBody() throws Exception {
    HttpResponse<String> r = patch(SMP, ours("other-uid", "True", "Ready"));
    assertThat(r.statusCode()).isEqualTo(422);
    assertThat(r.body())
        .contains(
            "\"kind\":\"Status\"",
            "\"reason\":\"Invalid\"",
            "metadata.uid: Invalid value: \\\"other-uid\\\": field is immutable");
    assertThat(byType("x.io/ready")).isNull();
  }

  @Test
  void resourceVersionBumpsOnEveryWrite() throws Exception {
    String before =
        api.pod("ns", "etcd-0").getAsJsonObject("metadata").get("resourceVersion").getAsString();
    patch(SMP, ours(uid, "True", "Ready"));
    String after =
        api.pod("ns", "etcd-0").getAsJsonObject("metadata").get("resourceVersion").getAsString();
    assertThat(Long.parseLong(after)).isGreaterThan(Long.parseLong(before));
  }

  @Test
  void aMissingTokenIs401AndUnknownPods404() throws Exception {
    assertThat(send("GET", "/api/v1/namespaces/ns/pods/etcd-0", null, null, false).statusCode())
        .isEqualTo(401);
    assertThat(send("GET", "/api/v1/namespaces/ns/pods/nope", null, null, true).statusCode())
        .isEqualTo(404);
    assertThat(send("GET", "/api/v1/namespaces/ns/pods/etcd-0", null, null, true).body())
        .contains(uid);
  }

  @Test
  void scriptedFaultsComeFirst() throws Exception {
    api.addFault(new FakeKubeApi.Fault(429, 3, java.time.Duration.ZERO));
    HttpResponse<String> r = patch(SMP, ours(uid, "True", "Ready"));
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("3");
    assertThat(patch(SMP, ours(uid, "True", "Ready")).statusCode()).isEqualTo(200);
  }
}
