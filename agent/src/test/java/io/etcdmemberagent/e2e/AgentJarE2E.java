package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.HttpsClients;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.TestPki;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The real jar as a process, beside real etcd. */
class AgentJarE2E {

  static Stream<String> versions() {
    return EtcdBinaries.withOldest().stream();
  }

  /** {@code --exit-after} with no etcd answering: the agent still stops by itself. */
  @Test
  void exitAfterStopsCleanlyWithoutEtcd() {
    int port = FreePorts.next();
    int refused = FreePorts.next();
    try (AgentProcess agent =
        AgentProcess.start(
            port,
            Map.of(),
            "run",
            "--etcd-endpoint=http://127.0.0.1:" + refused,
            "--http-host=127.0.0.1",
            "--http-port=" + port,
            "--kube=off",
            "--exit-after=3s")) {
      Poll.until(
          "/livez 200", Duration.ofSeconds(20), () -> Http.statusOrMinusOne(port, "/livez") == 200);
      assertThat(Http.statusOrMinusOne(port, "/readyz")).as("no etcd: not ready").isEqualTo(503);
      assertThat(agent.waitFor(30)).as("exit status after --exit-after").isZero();
      assertThat(agent.output()).contains("exit-after").contains("stopped");
    }
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void servesReadinessLogsJsonAndStopsCleanlyOnSigterm(String version) {
    try (EtcdCluster cluster = EtcdCluster.start(version, 3)) {
      int port = FreePorts.next();
      try (AgentProcess agent =
          AgentProcess.start(
              port,
              Map.of(
                  "ETCD_MEMBER_AGENT_LOG_FORMAT",
                  "json",
                  "ETCD_MEMBER_AGENT_POLL_INTERVAL",
                  "200ms"),
              "run",
              "--etcd-endpoint=" + cluster.member(0).clientUrl(),
              "--http-host=127.0.0.1",
              "--http-port=" + port)) {
        Duration toLive =
            Poll.until(
                "/livez 200",
                Duration.ofSeconds(20),
                () -> Http.statusOrMinusOne(port, "/livez") == 200);
        Duration toReady =
            Poll.until(
                "/readyz 200",
                Duration.ofSeconds(20),
                () -> Http.statusOrMinusOne(port, "/readyz") == 200);
        System.out.printf(
            "etcd %s: jar start -> /livez %d ms, -> /readyz 200 %d ms (cumulative)%n",
            version, toLive.toMillis(), toLive.plus(toReady).toMillis());
        assertThat(Http.get(port, "/metrics").body()).contains("etcd_member_agent_is_voter 1.0");

        long before = System.nanoTime();
        agent.process().destroy(); // SIGTERM
        int exit = agent.waitFor(10);
        long stopMillis = (System.nanoTime() - before) / 1_000_000;
        System.out.printf("etcd %s: SIGTERM -> exit %d in %d ms%n", version, exit, stopMillis);
        assertThat(exit).as("exit status after SIGTERM").isZero();
        assertThat(stopMillis).as("clean exit within a few seconds").isLessThan(5000);

        List<String> lines = agent.output().lines().toList();
        assertThat(lines).isNotEmpty().allMatch(l -> l.startsWith("{\"ts\":\"") && l.endsWith("}"));
        assertThat(lines)
            .anyMatch(
                l -> l.contains("\"event\":\"member-state\"") && l.contains("\"to\":\"Voter\""));
        assertThat(lines).anyMatch(l -> l.contains("\"event\":\"stopped\""));
        assertThat(lines.stream().filter(l -> l.contains("\"event\":\"poll\"")))
            .as("no line per poll at INFO")
            .isEmpty();
      }
    }
  }

  @Test
  void badInputExitsTwoWithOneLineNamingIt() {
    try (AgentProcess agent = AgentProcess.start(0, Map.of(), "run", "--poll-interval=soon")) {
      assertThat(agent.waitFor(30)).isEqualTo(2);
      assertThat(agent.output())
          .isEqualTo(
              "etcd-member-agent: invalid value \"soon\" for --poll-interval:"
                  + " expected a duration like 500ms, 2s or 5m\n");
    }
    try (AgentProcess agent =
        AgentProcess.start(0, Map.of("ETCD_MEMBER_AGENT_MAX_LAG", "5"), "run")) {
      assertThat(agent.waitFor(30)).isEqualTo(2);
      assertThat(agent.output())
          .isEqualTo(
              "etcd-member-agent: unknown environment variable ETCD_MEMBER_AGENT_MAX_LAG (no such flag)\n");
    }
    // A Service named etcd-member-agent-http in the namespace: the kubelet's links are set aside.
    Map<String, String> serviceLinks =
        Map.of(
            "ETCD_MEMBER_AGENT_HTTP_PORT", "tcp://10.96.0.9:8080",
            "ETCD_MEMBER_AGENT_HTTP_SERVICE_HOST", "10.96.0.9",
            "ETCD_MEMBER_AGENT_HTTP_PORT_8080_TCP_PROTO", "tcp");
    try (AgentProcess agent = AgentProcess.start(0, serviceLinks, "run", "--max-lag-entries=x")) {
      assertThat(agent.waitFor(30)).isEqualTo(2);
      assertThat(agent.output())
          .isEqualTo(
              "etcd-member-agent: invalid value \"x\" for --max-lag-entries:"
                  + " expected a whole number of at least 0\n");
    }
  }

  @Test
  void aTakenHttpPortExitsTwoNamingThePort() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        AgentProcess agent =
            AgentProcess.start(
                taken.getLocalPort(),
                Map.of(),
                "run",
                "--http-host=127.0.0.1",
                "--http-port=" + taken.getLocalPort())) {
      assertThat(agent.waitFor(30)).isEqualTo(2);
      assertThat(agent.output())
          .contains(
              "cannot serve HTTP on --http-host 127.0.0.1 --http-port " + taken.getLocalPort())
          .doesNotContain("\tat ");
    }
  }

  @TempDir Path dir;

  /**
   * HTTPS with client certificates, as a kubeadm static Pod runs it: probes anonymous, /metrics
   * only with a certificate of the clients' CA, the serving pair replaced in place, a broken
   * replacement refused while the last good pair goes on.
   */
  @Test
  void servesHttpsToClientCertificatesAndReplacesItsKeysInPlace() throws IOException {
    TestPki serving = new TestPki(dir, "serving");
    TestPki clients = new TestPki(dir, "clients");
    TestPki strangers = new TestPki(dir, "strangers");
    Path cert = dir.resolve("tls.crt");
    Path key = dir.resolve("tls.key");
    install(serving.issue("first"), cert, key);
    try (EtcdCluster cluster = EtcdCluster.start(EtcdBinaries.primary(), 1)) {
      int port = FreePorts.next();
      try (AgentProcess agent =
          AgentProcess.start(
              port,
              Map.of("ETCD_MEMBER_AGENT_LOG_FORMAT", "json"),
              "run",
              "--etcd-endpoint=" + cluster.member(0).clientUrl(),
              "--http-host=127.0.0.1",
              "--http-port=" + port,
              "--kube=off",
              "--https-cert-file=" + cert,
              "--https-key-file=" + key,
              "--https-client-ca-file=" + clients.caCert(),
              "--tls-reload-interval=200ms")) {
        javax.net.ssl.SSLContext probe = HttpsClients.anyServer();
        Poll.until(
            "/readyz 200 over HTTPS without a certificate",
            Duration.ofSeconds(30),
            () -> HttpsClients.statusOrMinusOne(probe, port, "/readyz") == 200);
        assertThat(Http.statusOrMinusOne(port, "/readyz")).as("no plain HTTP").isEqualTo(-1);
        assertThat(HttpsClients.get(probe, port, "/metrics", null).status())
            .as("no client certificate")
            .isEqualTo(401);
        TestPki.Issued stranger = strangers.issue("scraper");
        assertThat(
                HttpsClients.statusOrMinusOne(
                    HttpsClients.trusting(serving.caCert(), stranger.cert(), stranger.key()),
                    port,
                    "/metrics"))
            .as("a certificate of another CA: the handshake fails")
            .isEqualTo(-1);
        TestPki.Issued scraper = clients.issue("scraper");
        javax.net.ssl.SSLContext scraping =
            HttpsClients.trusting(serving.caCert(), scraper.cert(), scraper.key());
        HttpsClients.Answer metrics = HttpsClients.get(scraping, port, "/metrics", null);
        assertThat(metrics.status()).isEqualTo(200);
        assertThat(metrics.body())
            .contains("etcd_member_agent_cert_expiry_timestamp_seconds{cert=\"serving\"}");
        assertThat(metrics.served().getSubjectX500Principal()).hasToString("CN=first");

        install(serving.issue("second"), cert, key);
        Duration rotated =
            Poll.until(
                "the new certificate served",
                Duration.ofSeconds(20),
                () ->
                    HttpsClients.get(scraping, port, "/readyz", null)
                        .served()
                        .getSubjectX500Principal()
                        .getName()
                        .equals("CN=second"));
        System.out.printf("serving certificate replaced in place in %d ms%n", rotated.toMillis());

        TestPki.Issued third = serving.issue("third");
        Files.copy(third.cert(), cert, StandardCopyOption.REPLACE_EXISTING); // key stays second's
        Poll.until(
            "the broken pair reported in /status",
            Duration.ofSeconds(20),
            () ->
                HttpsClients.get(scraping, port, "/status", null)
                    .body()
                    .contains("does not belong to the certificate in --https-cert-file"));
        assertThat(
                HttpsClients.get(scraping, port, "/readyz", null)
                    .served()
                    .getSubjectX500Principal())
            .as("the last good pair goes on")
            .hasToString("CN=second");
        assertThat(agent.output()).contains("serving-tls-reload-failed");
      }
    }
  }

  @Test
  void aServingKeyOfAnotherCertificateExitsTwoNamingIt() {
    TestPki serving = new TestPki(dir, "serving");
    TestPki.Issued one = serving.issue("one");
    TestPki.Issued other = serving.issue("other");
    try (AgentProcess agent =
        AgentProcess.start(
            0,
            Map.of(),
            "run",
            "--kube=off",
            "--https-cert-file=" + one.cert(),
            "--https-key-file=" + other.key())) {
      assertThat(agent.waitFor(30)).isEqualTo(2);
      assertThat(agent.output())
          .startsWith(
              "etcd-member-agent: invalid value \"" + other.key() + "\" for --https-key-file")
          .contains("does not belong to the certificate in --https-cert-file")
          .hasLineCount(1);
    }
  }

  /** Replaces the pair the way a Secret volume does: each file whole, never half-written. */
  private static void install(TestPki.Issued issued, Path cert, Path key) throws IOException {
    Path keyTmp =
        Files.copy(
            issued.key(), key.resolveSibling("key.tmp"), StandardCopyOption.REPLACE_EXISTING);
    Path certTmp =
        Files.copy(
            issued.cert(), cert.resolveSibling("cert.tmp"), StandardCopyOption.REPLACE_EXISTING);
    Files.move(keyTmp, key, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    Files.move(certTmp, cert, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
