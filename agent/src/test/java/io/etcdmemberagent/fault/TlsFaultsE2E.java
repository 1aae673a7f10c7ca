package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import io.etcdmemberagent.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Certificates going bad under the real jar: this member's peer certificate reaching its end while
 * the agent runs, and the agent's client key becoming unreadable (the agent runs as a non-root UID,
 * as in the image) at start and while it runs.
 */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#withNewest")
class TlsFaultsE2E {

  @Parameter String version;

  private static final int NOBODY = 65534;

  private final Resources resources = new Resources();
  private final EtcdTestClient client = resources.keep(new EtcdTestClient());

  @AfterEach
  void cleanUp() throws Exception {
    resources.close();
  }

  private Process etcd(Path dir, String clientUrls, String peer, String... extra) {
    Process p =
        SingleEtcd.start(
            version,
            "tls",
            dir.resolve("tls.etcd"),
            clientUrls,
            peer,
            peer,
            dir.resolve("etcd.log"),
            extra);
    resources.keep(() -> Processes.kill(p));
    return p;
  }

  @Test
  void aPeerCertificateEndingWhileTheAgentRunsTurnsPeerTlsFalseAndReadinessStays()
      throws Exception {
    Path dir = resources.tempDir("tls-expiry-");
    TestPki pki = new TestPki(dir, "peer");
    Instant end = Instant.now().plusSeconds(18);
    TestPki.Issued peerCert =
        pki.issue(
            "ending",
            Instant.now().minus(Duration.ofDays(1)),
            end,
            List.of("localhost"),
            List.of("127.0.0.1"));
    String clientUrl = "http://127.0.0.1:" + FreePorts.next();
    etcd(
        dir,
        clientUrl,
        "https://127.0.0.1:" + FreePorts.next(),
        "--peer-cert-file",
        peerCert.cert().toString(),
        "--peer-key-file",
        peerCert.key().toString());
    long id = client.memberId(clientUrl);
    FaultRig rig = resources.keep(new FaultRig(true));
    rig.startAgent(
        clientUrl,
        List.of(clientUrl),
        "--peer-cacert=" + pki.caCert(),
        "--cert-expiry-warning=8s",
        "--peer-tls-check-interval=1s");
    rig.record(clientUrl, () -> List.of(clientUrl));
    rig.awaitReady("start");

    rig.mark(History.Kind.FAULT_BEGINS, "the peer certificate nears its end and ends");
    Poll.until(
        "peer-tls CertificateExpired at the API",
        Duration.ofSeconds(40),
        () -> peerTlsReasons(rig).contains("CertificateExpired"));
    rig.mark(History.Kind.FAULT_ENDS, "the peer certificate ended (readiness not gated by it)");

    History.Snapshot h = rig.assertInvariants(id, 5000);
    assertThat(peerTlsReasons(rig))
        .as("peer-tls reasons at the API, one patch per change")
        .containsExactly(
            "Starting", "PeerTlsValid", "CertificateExpiresSoon", "CertificateExpired");
    long firstReady = h.firstVerdictAfter(0, History.Verdict::ready).orElseThrow().atNanos();
    assertThat(h.verdicts())
        .as("peer-tls does not gate readiness by default: ready throughout")
        .filteredOn(v -> v.atNanos() > firstReady)
        .allMatch(History.Verdict::ready);
    assertThat(Http.get(rig.agent().port(), "/metrics").body())
        .contains(
            "etcd_member_agent_cert_expiry_timestamp_seconds{cert=\"peer\"} "
                + (double) end.getEpochSecond());
    assertThat(rig.publication.events())
        .as("a PeerTlsProblem event")
        .anyMatch(e -> e.get("reason").getAsString().equals("PeerTlsProblem"));
  }

  /** The peer-tls condition's reason after each status patch that changed it. */
  private static List<String> peerTlsReasons(FaultRig rig) {
    List<String> reasons = new ArrayList<>();
    for (JsonArray conditions : rig.publication.conditionHistory()) {
      for (JsonElement c : conditions) {
        JsonObject o = c.getAsJsonObject();
        if (o.get("type").getAsString().endsWith("/peer-tls")) {
          String reason = o.get("reason").getAsString();
          if (reasons.isEmpty() || !reasons.get(reasons.size() - 1).equals(reason)) {
            reasons.add(reason);
          }
        }
      }
    }
    return reasons;
  }

  @Test
  void anUnreadableClientKeyStopsTheStartCleanlyAndIsReportedWhileRunning() throws Exception {
    assumeTrue(isRoot(), "running the agent as another UID needs root");
    Path dir = resources.tempDir("tls-key-");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    TestPki pki = new TestPki(dir, "client");
    TestPki.Issued server = pki.issue("server");
    String https = "https://127.0.0.1:" + FreePorts.next();
    String plain = "http://127.0.0.1:" + FreePorts.next(); // the test's own view, no TLS
    etcd(
        dir,
        https + "," + plain,
        "http://127.0.0.1:" + FreePorts.next(),
        "--cert-file",
        server.cert().toString(),
        "--key-file",
        server.key().toString(),
        "--trusted-ca-file",
        pki.caCert().toString(),
        "--client-cert-auth");
    long id = client.memberId(plain);
    TestPki.Issued first = readableBy(NOBODY, pki.issue("agent-first"));
    TestPki.Issued rootOnly = pki.issue("agent-root-only");
    Files.setPosixFilePermissions(rootOnly.cert(), PosixFilePermissions.fromString("rw-r--r--"));
    Files.setPosixFilePermissions(rootOnly.key(), PosixFilePermissions.fromString("rw-------"));

    int port = FreePorts.next();
    AgentProcess refused =
        resources.keep(
            AgentProcess.start(
                FaultRig.asUserCommand(NOBODY),
                port,
                Map.of(),
                "run",
                "--etcd-endpoint=" + https,
                "--http-port=" + port,
                "--kube=off",
                "--cacert=" + pki.caCert(),
                "--cert=" + rootOnly.cert(),
                "--key=" + rootOnly.key()));
    assertThat(refused.waitFor(60)).as("exit status, " + refused.output()).isEqualTo(2);
    List<String> lines = refused.output().lines().filter(l -> !l.isBlank()).toList();
    assertThat(lines).as("one line naming the flag and the file").hasSize(1);
    assertThat(lines.get(0)).contains("--key", rootOnly.key().toString());
    System.out.println("[fault] unreadable key at start: " + lines.get(0));

    FaultRig rig = resources.keep(new FaultRig(false).asUser(NOBODY));
    rig.startAgent(
        https,
        List.of(https),
        "--cacert=" + pki.caCert(),
        "--cert=" + first.cert(),
        "--key=" + first.key(),
        "--tls-reload-interval=500ms");
    rig.record(plain, () -> List.of(plain));
    rig.awaitReady("start, as UID " + NOBODY);

    rig.mark(History.Kind.STEADY_BEGINS, "the key rotated to a file the agent cannot read");
    TestPki.Issued second = pki.issue("agent-second");
    // the key first (as root, 0600: unreadable for the agent), then its certificate
    replace(first.key(), second.key(), "rw-------");
    replace(first.cert(), second.cert(), "rw-r--r--");
    Poll.until(
        "the reload failure in /status",
        Duration.ofSeconds(20),
        () -> tls(rig).get("reloadFailure").isJsonPrimitive());
    String failure = tls(rig).get("reloadFailure").getAsString();
    assertThat(failure).contains("--key");
    System.out.println("[fault] unreadable key while running: " + failure);
    assertThat(tls(rig).get("clientSubject").getAsString())
        .as("the last good files stay in use")
        .contains("agent-first");
    assertThat(Http.get(rig.agent().port(), "/metrics").body())
        .containsPattern("etcd_member_agent_tls_reloads_total\\{result=\"failure\"} [1-9]");
    assertThat(rig.readyz()).isEqualTo(200);
    rig.mark(History.Kind.STEADY_ENDS, "the key rotated to a file the agent cannot read");

    rig.mark(History.Kind.FAULT_BEGINS, "the key made readable");
    readableBy(NOBODY, first);
    Poll.until(
        "the rotated certificate in use",
        Duration.ofSeconds(20),
        () -> tls(rig).get("clientSubject").getAsString().contains("agent-second"));
    rig.mark(History.Kind.FAULT_ENDS, "the key made readable");
    assertThat(tls(rig).get("reloadFailure").isJsonNull()).isTrue();
    rig.awaitReady("rotated");
    rig.assertInvariants(id, 5000);
  }

  private static JsonObject tls(FaultRig rig) {
    return JsonParser.parseString(Http.get(rig.agent().port(), "/status").body())
        .getAsJsonObject()
        .getAsJsonObject("tls");
  }

  /** Swaps {@code target} for a root-owned copy of {@code source} in one rename. */
  private static void replace(Path target, Path source, String permissions) throws Exception {
    Path next = Files.createTempFile(target.getParent(), "next-", ".pem");
    Files.setPosixFilePermissions(next, PosixFilePermissions.fromString(permissions));
    Files.write(next, Files.readAllBytes(source));
    Files.move(next, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static TestPki.Issued readableBy(int uid, TestPki.Issued issued) throws Exception {
    for (Path p : List.of(issued.cert(), issued.key())) {
      Files.setAttribute(p, "unix:uid", uid);
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
    }
    Files.setPosixFilePermissions(issued.cert(), PosixFilePermissions.fromString("rw-r--r--"));
    return issued;
  }

  private static boolean isRoot() {
    return "root".equals(System.getProperty("user.name"));
  }
}
