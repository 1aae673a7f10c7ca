package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import io.etcdmemberagent.testing.TestPki;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The peer-TLS check against real etcd 3.5 members serving peer certificates made in the test:
 * valid, expired, for another host, from another CA, near its end, a plain http peer URL, and an
 * advertised peer port nobody listens on (then {@code --peer-cert} is judged instead).
 */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#versions")
class PeerTlsIT {

  @Parameter String version;

  @TempDir static Path dir;
  static TestPki pki;
  static TestPki stranger;

  @BeforeAll
  static void authorities() {
    pki = new TestPki(dir, "peer");
    stranger = new TestPki(dir, "stranger");
  }

  static TestPki.Issued cert(String subject, Duration from, Duration to, String dns, String ip) {
    Instant now = Instant.now();
    return pki.issue(
        subject,
        now.plus(from),
        now.plus(to),
        dns == null ? List.of() : List.of(dns),
        ip == null ? List.of() : List.of(ip));
  }

  static Stream<Arguments> cases() {
    Duration day = Duration.ofDays(1);
    return Stream.of(
        Arguments.of(
            "valid",
            cert("ok", day.negated(), day.multipliedBy(90), "localhost", "127.0.0.1"),
            "PeerTlsValid",
            "True"),
        Arguments.of(
            "expired",
            cert("old", day.multipliedBy(-10), day.negated(), null, "127.0.0.1"),
            "CertificateExpired",
            "False"),
        Arguments.of(
            "wrong host",
            cert("elsewhere", day.negated(), day.multipliedBy(90), "other.example", "10.9.9.9"),
            "CertificateHostMismatch",
            "False"),
        Arguments.of("untrusted", stranger.issue("stranger"), "CertificateUntrusted", "False"),
        Arguments.of(
            "expires soon",
            cert("soon", day.negated(), day.multipliedBy(2), null, "127.0.0.1"),
            "CertificateExpiresSoon",
            "False"),
        Arguments.of("http peer URL", null, "PlainHttpPeerUrl", "False"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void thePeerTlsConditionNamesTheProblem(
      String name, TestPki.Issued peerCert, String reason, String status) {
    String scheme = peerCert == null ? "http" : "https";
    String peer = scheme + "://127.0.0.1:" + FreePorts.next();
    Process etcd = start(name, peer, peer, peerCert);
    try (InProcessAgent agent = agent(etcd, "--peer-cacert=" + pki.caCert())) {
      JsonObject check = awaitPeerCheck(agent, reason);
      assertThat(check.get("reason").getAsString()).isEqualTo(reason);
      assertThat(condition(agent, "peer-tls").get("status").getAsString()).isEqualTo(status);
      assertThat(agent.get("/readyz").status())
          .as("peer-tls does not gate readiness by default")
          .isEqualTo(200);
      if (peerCert != null) {
        assertThat(agent.get("/metrics").body())
            .containsPattern(
                "etcd_member_agent_cert_expiry_timestamp_seconds\\{cert=\"peer\"} [0-9.E]+");
      }
    } finally {
      Processes.kill(etcd);
    }
  }

  @Test
  void anUndialledPeerPortFallsBackToPeerCertAndCanGateReadiness() {
    TestPki.Issued served =
        cert("ok2", Duration.ofDays(-1), Duration.ofDays(90), null, "127.0.0.1");
    String listen = "https://127.0.0.1:" + FreePorts.next();
    String advertised = "https://127.0.0.1:" + FreePorts.next();
    Process etcd = start("undialled", listen, advertised, served);
    try {
      try (InProcessAgent agent =
          agent(etcd, "--peer-cacert=" + pki.caCert(), "--peer-cert=" + served.cert())) {
        awaitPeerCheck(agent, "PeerTlsValid");
        JsonObject url = peerTls(agent).getAsJsonArray("urls").get(0).getAsJsonObject();
        assertThat(url.get("source").getAsString()).isEqualTo("--peer-cert");
      }
      try (InProcessAgent agent =
          agent(etcd, "--peer-cacert=" + pki.caCert(), "--peer-tls-gates-readiness=true")) {
        awaitPeerCheck(agent, "CertificateUnavailable");
        assertThat(condition(agent, "peer-tls").get("status").getAsString()).isEqualTo("Unknown");
        assertThat(agent.get("/readyz").status()).isEqualTo(503);
        assertThat(agent.get("/readyz/peer-tls").body())
            .contains("[-]peer-tls failed", "could not be read");
      }
    } finally {
      Processes.kill(etcd);
    }
  }

  @Test
  void aPeerTlsProblemIsAPodConditionAndAnEvent() {
    TestPki.Issued expired =
        cert("gone", Duration.ofDays(-10), Duration.ofDays(-1), null, "127.0.0.1");
    String peer = "https://127.0.0.1:" + FreePorts.next();
    Process etcd = start("event", peer, peer, expired);
    try (KubeControlPlane kube = KubeControlPlane.start(dir.resolve("kube-" + version))) {
      KubePods pods = new KubePods(kube, "etcd", "etcd").withChartRbac(dir);
      try (InProcessAgent agent =
          agent(etcd, pods.agentFlagsFor("etcd-0", dir).toArray(String[]::new))) {
        Poll.until(
            "peer-tls False at the API",
            Duration.ofSeconds(30),
            () -> pods.conditions("etcd-0").toString().contains("CertificateExpired"));
        Poll.until(
            "a PeerTlsProblem event",
            Duration.ofSeconds(10),
            () -> pods.eventReasons().contains("PeerTlsProblem"));
      }
    } finally {
      Processes.kill(etcd);
    }
  }

  private Process start(String name, String listen, String advertise, TestPki.Issued cert) {
    String client = "http://127.0.0.1:" + FreePorts.next();
    List<String> extra = new ArrayList<>();
    if (cert != null) {
      extra.addAll(
          List.of(
              "--peer-cert-file",
              cert.cert().toString(),
              "--peer-key-file",
              cert.key().toString()));
    }
    String safe = version + "-" + name.replace(' ', '-');
    Process p =
        SingleEtcd.start(
            version,
            safe,
            dir.resolve(safe + ".etcd"),
            client,
            listen,
            advertise,
            dir.resolve(safe + ".log"),
            extra.toArray(String[]::new));
    ENDPOINTS.put(p, client);
    return p;
  }

  private static final java.util.Map<Process, String> ENDPOINTS =
      new java.util.concurrent.ConcurrentHashMap<>();

  private static InProcessAgent agent(Process etcd, String... extra) {
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--etcd-endpoint=" + ENDPOINTS.get(etcd),
                "--poll-interval=300ms",
                "--etcd-timeout=1s",
                "--kube-timeout=1s"));
    flags.addAll(List.of(extra));
    return InProcessAgent.start(flags.toArray(String[]::new));
  }

  private static JsonObject status(InProcessAgent agent) {
    return JsonParser.parseString(agent.get("/status").body()).getAsJsonObject();
  }

  private static JsonObject peerTls(InProcessAgent agent) {
    return status(agent).getAsJsonObject("peerTls");
  }

  private static JsonObject awaitPeerCheck(InProcessAgent agent, String reason) {
    Poll.until(
        "peer-tls " + reason,
        Duration.ofSeconds(30),
        () -> {
          JsonObject s = status(agent);
          return s.has("peerTls")
              && s.getAsJsonObject("peerTls")
                  .getAsJsonObject("check")
                  .get("reason")
                  .getAsString()
                  .equals(reason);
        });
    return peerTls(agent).getAsJsonObject("check");
  }

  private static JsonObject condition(InProcessAgent agent, String name) {
    for (var c : status(agent).getAsJsonArray("conditions")) {
      JsonObject o = c.getAsJsonObject();
      if (o.get("name").getAsString().equals(name)) {
        return o;
      }
    }
    throw new AssertionError("no condition " + name + " in /status");
  }
}
