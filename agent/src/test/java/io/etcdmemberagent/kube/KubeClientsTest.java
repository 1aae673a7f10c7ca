package io.etcdmemberagent.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcdmemberagent.testing.TestPki;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a kubeconfig becomes a connection (the calls themselves run against the real API server in
 * KubeConditionsIT and EtcdMemberIT): paths relative to the kubeconfig, as kubectl reads them, and
 * one clear error for what cannot be used.
 */
class KubeClientsTest {

  @TempDir Path dir;

  private Path kubeconfig(String server, String cluster, String user) throws IOException {
    return Files.writeString(
        dir.resolve("kubeconfig"),
        """
        apiVersion: v1
        kind: Config
        current-context: c
        clusters:
        - name: c
          cluster: {server: "%s", %s}
        users:
        - name: u
          user: {%s}
        contexts:
        - name: c
          context: {cluster: c, user: u}
        """
            .formatted(server, cluster, user));
  }

  @Test
  void theCaAndTheClientCertificateAreFoundRelativeToTheKubeconfig() throws IOException {
    TestPki pki = new TestPki(dir, "kube");
    TestPki.Issued admin = pki.issueUser("admin", "system:masters");
    Path config =
        kubeconfig(
            "https://127.0.0.1:6443",
            "certificate-authority: " + pki.caCert().getFileName(),
            "client-certificate: "
                + admin.cert().getFileName()
                + ", client-key: "
                + admin.key().getFileName());
    KubeHttp http = KubeClients.connect(Optional.of(config), Duration.ofSeconds(1));
    http.close();

    Files.delete(pki.caCert());
    assertThatThrownBy(() -> KubeClients.connect(Optional.of(config), Duration.ofSeconds(1)))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(pki.caCert().getFileName().toString());
  }

  @Test
  void aCaWithoutACertificateOrAServerThatIsNoUrlIsOneClearError() throws IOException {
    Files.writeString(dir.resolve("ca.crt"), "not a certificate\n");
    Path noCa = kubeconfig("https://127.0.0.1:6443", "certificate-authority: ca.crt", "token: t");
    assertThatThrownBy(() -> KubeClients.connect(Optional.of(noCa), Duration.ofSeconds(1)))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("CA");

    Path noUrl = kubeconfig("127.0.0.1:6443", "insecure-skip-tls-verify: true", "token: t");
    assertThatThrownBy(() -> KubeClients.connect(Optional.of(noUrl), Duration.ofSeconds(1)))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("not a URL: 127.0.0.1:6443");
  }

  @Test
  void answersAreReadLeniently() {
    Map<?, ?> pod =
        KubeJson.object(
            "{\"metadata\":{\"uid\":\"u1\",\"generation\":3},\"status\":{\"conditions\":7}}");
    assertThat(KubeJson.text(KubeJson.map(pod.get("metadata")).get("uid"))).isEqualTo("u1");
    assertThat(KubeJson.number(KubeJson.map(pod.get("metadata")).get("generation"))).isEqualTo(3);
    assertThat(KubeJson.list(KubeJson.map(pod.get("status")).get("conditions"))).isEmpty();
    assertThat(KubeJson.object("<html>bad gateway</html>")).isEmpty();
    assertThat(KubeJson.instant("yesterday")).isEqualTo(java.time.Instant.EPOCH);
    assertThat(KubeJson.instant("2026-12-05T03:00:00Z").getEpochSecond()).isEqualTo(1796439600L);
  }
}
