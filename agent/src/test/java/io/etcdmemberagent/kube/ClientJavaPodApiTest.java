package io.etcdmemberagent.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.KubeAnswer;
import io.kubernetes.client.util.KubeConfig;
import java.io.StringReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How API server answers become decisions, and where the bearer token is read from. */
class ClientJavaPodApiTest {

  private static KubeCallException error(
      int code, String message, Map<String, List<String>> headers) {
    String body =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\""
            + message.replace("\"", "\\\"")
            + "\",\"code\":"
            + code
            + "}";
    return new KubeCallException(code, body, headers);
  }

  @Test
  void aPatchForAReCreatedPodIsAConflictLikeA409() {
    KubeAnswer a =
        ClientJavaPodApi.answer(
            error(
                422,
                "Pod \"etcd-1\" is invalid: metadata.uid: Invalid value: \"abc\": field is immutable",
                Map.of()));
    assertThat(a).isInstanceOf(KubeAnswer.Conflict.class);
    assertThat(((KubeAnswer.Conflict) a).message())
        .isEqualTo(
            "422: Pod \"etcd-1\" is invalid: metadata.uid: Invalid value: \"abc\": field is immutable");
    assertThat(ClientJavaPodApi.answer(error(409, "conflict", Map.of())))
        .isInstanceOf(KubeAnswer.Conflict.class);
  }

  @Test
  void otherInvalidPatchesAndForbiddenAreRejectedWithTheServersOwnWords() {
    KubeAnswer forbidden =
        ClientJavaPodApi.answer(
            error(403, "events is forbidden: User \"x\" cannot create resource", Map.of()));
    assertThat(forbidden)
        .isEqualTo(
            new KubeAnswer.Rejected(
                403, "403: events is forbidden: User \"x\" cannot create resource"));
    assertThat(ClientJavaPodApi.answer(error(422, "status.conditions: Invalid value", Map.of())))
        .isInstanceOf(KubeAnswer.Rejected.class);
    assertThat(ClientJavaPodApi.answer(error(404, "pods \"etcd-0\" not found", Map.of())))
        .isEqualTo(new KubeAnswer.Rejected(404, "404: pods \"etcd-0\" not found"));
  }

  @Test
  void unauthorizedIsRetriedBecauseTheTokenFileMayHaveBeenRotated() {
    assertThat(ClientJavaPodApi.answer(error(401, "Unauthorized", Map.of())))
        .isEqualTo(new KubeAnswer.Retry(Duration.ZERO, "401: Unauthorized"));
    assertThat(
            ClientJavaPodApi.answer(
                error(429, "too many requests", Map.of("Retry-After", List.of("3")))))
        .isEqualTo(new KubeAnswer.Retry(Duration.ofSeconds(3), "429: too many requests"));
  }

  @Test
  void aNonJsonBodyIsKeptWhole() {
    assertThat(
            ClientJavaPodApi.answer(
                new KubeCallException(502, "<html>bad gateway</html>", Map.of())))
        .isEqualTo(new KubeAnswer.Retry(Duration.ZERO, "502: <html>bad gateway</html>"));
  }

  @Test
  void theCurrentUsersTokenFileIsFoundRelativeToTheKubeconfig() {
    KubeConfig config =
        KubeConfig.loadKubeConfig(
            new StringReader(
                """
                apiVersion: v1
                kind: Config
                current-context: b
                contexts:
                - name: a
                  context: {cluster: c, user: ua}
                - name: b
                  context: {cluster: c, user: ub}
                users:
                - name: ua
                  user: {tokenFile: /other/token}
                - name: ub
                  user: {tokenFile: secrets/token}
                """));
    assertThat(BearerTokenFile.of(config, Path.of("/etc/agent/kubeconfig")).orElseThrow().file())
        .isEqualTo(Path.of("/etc/agent/secrets/token"));
    KubeConfig withoutFile =
        KubeConfig.loadKubeConfig(
            new StringReader(
                """
                apiVersion: v1
                kind: Config
                current-context: a
                contexts:
                - name: a
                  context: {cluster: c, user: ua}
                users:
                - name: ua
                  user: {token: abc}
                """));
    assertThat(BearerTokenFile.of(withoutFile, Path.of("/etc/agent/kubeconfig"))).isEmpty();
  }
}
