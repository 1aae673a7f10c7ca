package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import io.etcdmemberagent.testing.TestCertificates;
import io.etcdmemberagent.testing.TestCertificates.KeyFormat;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The agent over client mTLS to a real etcd 3.5 started with --client-cert-auth. */
class ClientTlsIT {

  @TempDir static Path dir;
  static TestCertificates certs;
  static Process etcd;
  static String endpoint;

  @BeforeAll
  static void startEtcdWithClientCertAuth() throws IOException {
    certs = new TestCertificates(dir);
    Path[] server = certs.issue("server", KeyFormat.SEC1_EC);
    endpoint = "https://127.0.0.1:" + FreePorts.next();
    etcd =
        SingleEtcd.start(
            "tls0",
            dir.resolve("tls0.etcd"),
            endpoint,
            dir.resolve("etcd.log"),
            "--cert-file",
            server[0].toString(),
            "--key-file",
            server[1].toString(),
            "--client-cert-auth",
            "--trusted-ca-file",
            certs.ca().toString());
  }

  @AfterAll
  static void stop() {
    Processes.kill(etcd);
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
