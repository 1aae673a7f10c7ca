package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import io.etcdmemberagent.testing.TestCertificates;
import io.etcdmemberagent.testing.TestCertificates.KeyFormat;
import io.etcdmemberagent.testing.TestPki;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The agent over client mTLS to a real etcd 3.5 started with --client-cert-auth. */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#versions")
class ClientTlsIT {

  @Parameter String version;

  @TempDir static Path dir;
  static TestCertificates certs;
  static Process etcd;
  static String endpoint;
  static String runningVersion;

  /** One etcd per version, shared by the tests of that class invocation. */
  @BeforeEach
  void startEtcdWithClientCertAuth() throws IOException {
    if (version.equals(runningVersion)) {
      return;
    }
    stop();
    if (certs == null) {
      certs = new TestCertificates(dir);
    }
    Path[] server = certs.issue("server-" + version, KeyFormat.SEC1_EC);
    endpoint = "https://127.0.0.1:" + FreePorts.next();
    etcd =
        SingleEtcd.start(
            version,
            "tls0",
            dir.resolve("tls0-" + version + ".etcd"),
            endpoint,
            dir.resolve("etcd-" + version + ".log"),
            "--cert-file",
            server[0].toString(),
            "--key-file",
            server[1].toString(),
            "--client-cert-auth",
            "--trusted-ca-file",
            certs.ca().toString());
    runningVersion = version;
  }

  @AfterAll
  static void stop() {
    Processes.kill(etcd);
    etcd = null;
    runningVersion = null;
  }

  @ParameterizedTest(name = "client key {0}")
  @EnumSource(KeyFormat.class)
  void aClientCertificateWithAnyKeyFormatGetsReady(KeyFormat format) {
    Path[] client = certs.issue("client-" + format.name().toLowerCase(), format);
    try (InProcessAgent agent =
        InProcessAgent.start(
            "--etcd-endpoint=" + endpoint,
            "--cacert=" + certs.ca(),
            "--cert=" + client[0],
            "--key=" + client[1],
            "--poll-interval=300ms")) {
      Poll.until(
          "ready over mTLS", Duration.ofSeconds(30), () -> agent.get("/readyz").status() == 200);
    }
  }

  /**
   * The files live in a Kubernetes Secret volume layout: {@code tls.crt -> ..data/tls.crt}, {@code
   * ..data -> ..<timestamp>}; rotation swaps {@code ..data} atomically, as the kubelet does.
   */
  @Test
  void aRotatedClientCertificateIsUsedWithoutRestartAndABrokenOneIsReported() throws IOException {
    Path secret = dir.resolve("secret-" + version);
    java.nio.file.Files.createDirectories(secret);
    TestPki stranger = new TestPki(dir, "stranger");
    TestPki.Issued untrusted = stranger.issue("untrusted");
    publish(secret, "..v1", untrusted.cert(), untrusted.key());
    java.nio.file.Files.createSymbolicLink(secret.resolve("tls.crt"), Path.of("..data/tls.crt"));
    java.nio.file.Files.createSymbolicLink(secret.resolve("tls.key"), Path.of("..data/tls.key"));
    try (InProcessAgent agent =
        InProcessAgent.start(
            "--etcd-endpoint=" + endpoint,
            "--cacert=" + certs.ca(),
            "--cert=" + secret.resolve("tls.crt"),
            "--key=" + secret.resolve("tls.key"),
            "--tls-reload-interval=300ms",
            "--poll-interval=300ms")) {
      Poll.until(
          "a certificate etcd does not trust fails",
          Duration.ofSeconds(10),
          () -> agent.get("/readyz/serving").body().contains("[-]serving failed"));

      Path[] rotated = certs.issue("rotated", KeyFormat.PKCS8_RSA);
      publish(secret, "..v2", rotated[0], rotated[1]);
      Poll.until(
          "ready with the rotated certificate",
          Duration.ofSeconds(15),
          () -> agent.get("/readyz").status() == 200);
      assertThat(agent.get("/status").body()).contains("\"clientSubject\":\"CN=rotated\"");
      assertThat(agent.get("/metrics").body())
          .contains("etcd_member_agent_tls_reloads_total{result=\"success\"} 1.0");

      Path[] other = certs.issue("other", KeyFormat.SEC1_EC);
      publish(secret, "..v3", rotated[0], other[1]);
      Poll.until(
          "the broken pair reported",
          Duration.ofSeconds(10),
          () -> agent.get("/status").body().contains("does not belong to the certificate"));
      long seq = sequence(agent);
      Poll.until("two more polls", Duration.ofSeconds(10), () -> sequence(agent) >= seq + 2);
      assertThat(agent.get("/readyz").status())
          .as("the last good certificate stays in use")
          .isEqualTo(200);
      assertThat(agent.get("/metrics").body())
          .containsPattern("tls_reloads_total\\{result=\"failure\"} [1-9]");

      publish(secret, "..v4", rotated[0], rotated[1]);
      Poll.until(
          "the failure cleared once the files are good again",
          Duration.ofSeconds(10),
          () -> agent.get("/status").body().contains("\"reloadFailure\":null"));
    }
  }

  private static long sequence(InProcessAgent agent) {
    var m =
        java.util.regex.Pattern.compile("\"sequence\":(\\d+)").matcher(agent.get("/status").body());
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  /** Writes a new timestamped directory and swaps {@code ..data} to it in one rename. */
  private static void publish(Path secret, String version, Path cert, Path key) throws IOException {
    Path target = java.nio.file.Files.createDirectories(secret.resolve(version));
    java.nio.file.Files.copy(cert, target.resolve("tls.crt"));
    java.nio.file.Files.copy(key, target.resolve("tls.key"));
    Path next = secret.resolve("..data_tmp");
    java.nio.file.Files.createSymbolicLink(next, Path.of(version));
    java.nio.file.Files.move(
        next,
        secret.resolve("..data"),
        java.nio.file.StandardCopyOption.ATOMIC_MOVE,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void withoutAClientCertificateTheAnswerFailsFastNotHangs() {
    try (InProcessAgent agent =
        InProcessAgent.start(
            "--etcd-endpoint=" + endpoint,
            "--cacert=" + certs.ca(),
            "--etcd-timeout=10s",
            "--poll-interval=300ms")) {
      Poll.until(
          "a TLS failure reported",
          Duration.ofSeconds(8),
          () -> agent.get("/readyz/serving").body().contains("[-]serving failed"));
      assertThat(agent.get("/readyz/serving").body()).doesNotContain("no answer within");
    }
  }
}
