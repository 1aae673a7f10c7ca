package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonObject;
import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.HttpsClients;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.TestPki;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart with client and peer TLS on the real node: certificates in Secrets (the keys mounted
 * with mode 0440 and readable through the Pod's fsGroup only), etcd serving https on both ports
 * with client-certificate authentication, the agent and join using their own client certificate,
 * and the agent checking the peer certificate it sees (never the peer key). Three members come up
 * Ready, each with its peer-tls condition True and its EtcdMember saying so.
 */
class NodeTlsE2E {

  static final String NS = "payments";
  static final String RELEASE = "payments";

  @TempDir Path dir;

  @Test
  void clientAndPeerTlsFromSecrets() throws Exception {
    assumeTrue(KubeNode.available(), "the node needs root");
    KubeNode node = KubeNode.shared();
    try (EtcdTestClient client = new EtcdTestClient()) {
      ChartRelease db = new ChartRelease(node, RELEASE, NS, client, "https");
      db.createRestrictedNamespace();
      TestPki pki = new TestPki(dir, "etcd");
      List<String> names =
          new ArrayList<>(List.of("localhost", RELEASE + "-client." + NS + ".svc"));
      for (int i = 0; i < 3; i++) {
        names.add(RELEASE + "-" + i + "." + RELEASE + "-peer." + NS + ".svc");
      }
      Instant now = Instant.now();
      Instant end = now.plus(Duration.ofDays(365));
      secret(
          node,
          pki,
          "etcd-server",
          pki.issue("etcd-server", now.minusSeconds(3600), end, names, List.of("127.0.0.1")));
      secret(
          node,
          pki,
          "etcd-peer",
          pki.issue("etcd-peer", now.minusSeconds(3600), end, names, List.of()));
      secret(
          node,
          pki,
          "etcd-agent",
          pki.issue("etcd-member-agent", now.minusSeconds(3600), end, List.of(), List.of()));

      long started = System.nanoTime();
      db.install(
          ChartRelease.QUICK_BOOTSTRAP,
          "tls.client.enabled=true",
          "tls.client.serverSecret=etcd-server",
          "tls.client.agentSecret=etcd-agent",
          "tls.peer.enabled=true",
          "tls.peer.secret=etcd-peer",
          "agent.https.enabled=true",
          "agent.authz=kube");
      db.awaitReadyVotersByConditions(3, Duration.ofMinutes(5));
      System.out.printf(
          "[node] TLS release: 3 Ready members in %.1f s%n", (System.nanoTime() - started) / 1e9);
      for (JsonObject pod : db.pods()) {
        String name = pod.getAsJsonObject("metadata").get("name").getAsString();
        assertThat(ChartRelease.condition(pod, ChartRelease.PREFIX + "peer-tls"))
            .as("%s's peer TLS", name)
            .isEqualTo("True");
        assertThat(ChartRelease.condition(pod, ChartRelease.PREFIX + "ready")).isEqualTo("True");
      }
      for (JsonObject member : db.etcdMembers().values()) {
        assertThat(member.getAsJsonObject("status").toString())
            .as("the EtcdMember reports https peers")
            .doesNotContain("PlainHttpPeerUrl");
      }
      secureServing(node, db);
      db.uninstall();
    }
  }

  /**
   * The agent port with the chart's secure serving (the pair the chart generated): the kubelet's
   * HTTPS probes made the Pods Ready; /readyz answers anyone; /metrics and /status only a token
   * bound to the chart's metrics-reader role; the etcd container holds no ServiceAccount token.
   */
  private static void secureServing(KubeNode node, ChartRelease db) {
    node.kubectl("create", "serviceaccount", "stranger", "-n", NS);
    String stranger = node.kubectl("create", "token", "stranger", "-n", NS).strip();
    String pod = db.pod(0);
    String ip = db.podIps().get(pod);
    javax.net.ssl.SSLContext any = HttpsClients.anyServer();
    HttpsClients.Answer probe = HttpsClients.get(any, ip, ChartRelease.AGENT_PORT, "/readyz", null);
    assertThat(probe.status()).as("/readyz without a token").isEqualTo(200);
    assertThat(probe.served().getSubjectX500Principal().getName())
        .as("the pair the chart generated")
        .isEqualTo("CN=" + RELEASE);
    for (String path : List.of("/metrics", "/status")) {
      assertThat(HttpsClients.get(any, ip, ChartRelease.AGENT_PORT, path, null).status())
          .as(path)
          .isEqualTo(401);
      assertThat(HttpsClients.get(any, ip, ChartRelease.AGENT_PORT, path, stranger).status())
          .as(path + " for a ServiceAccount without the role")
          .isEqualTo(403);
      io.etcdmemberagent.testing.Poll.until(
          path + " for the reader (the binding may take a moment to reach the authorizer)",
          Duration.ofSeconds(30),
          () -> db.agentGet(ip, path).status() == 200);
    }
    String tokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token";
    assertThat(
            java.nio.file.Files.exists(
                Path.of("/proc/" + node.containerPid(NS, pod, "etcd") + "/root" + tokenFile)))
        .as("the etcd container holds no token")
        .isFalse();
    assertThat(
            java.nio.file.Files.exists(
                Path.of("/proc/" + node.containerPid(NS, pod, "agent") + "/root" + tokenFile)))
        .as("the agent's token is projected where client libraries look")
        .isTrue();
  }

  /** A Secret with tls.crt, tls.key and ca.crt, as cert-manager writes them. */
  private static void secret(KubeNode node, TestPki pki, String name, TestPki.Issued issued) {
    node.kubectl(
        "create",
        "secret",
        "generic",
        name,
        "-n",
        NS,
        "--from-file=tls.crt=" + issued.cert(),
        "--from-file=tls.key=" + issued.key(),
        "--from-file=ca.crt=" + pki.caCert());
  }
}
