package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.HttpsClients;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import io.etcdmemberagent.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --authz=kube} against a real kube-apiserver with real ServiceAccount tokens: the agent
 * asks the server (TokenReview, SubjectAccessReview) as its own ServiceAccount, bound to {@code
 * system:auth-delegator} and nothing else; a reader's ServiceAccount is bound to a {@code
 * metrics-reader} role. The health paths answer without a token throughout.
 */
class AccessReviewIT {

  static final String NS = "access";

  @TempDir static Path dir;
  static KubeControlPlane kube;
  static Process etcd;
  static String etcdUrl;

  @BeforeAll
  static void start() {
    kube = KubeControlPlane.start(dir.resolve("kube"));
    etcdUrl = "http://127.0.0.1:" + FreePorts.next();
    etcd =
        SingleEtcd.start(
            EtcdBinaries.primary(),
            "solo",
            dir.resolve("etcd"),
            etcdUrl,
            dir.resolve("etcd.log"),
            "--unsafe-no-fsync");
    kube.createNamespace(NS);
    for (String sa : new String[] {"agent", "reader", "stranger"}) {
      kube.kubectl("create", "serviceaccount", sa, "-n", NS);
    }
    kube.grantMetricsRead("metrics-reader", "reader-reads-metrics", NS, "reader");
  }

  @AfterAll
  static void stop() {
    if (etcd != null) {
      Processes.kill(etcd);
    }
    if (kube != null) {
      kube.close();
    }
  }

  String token(String sa) {
    return kube.token(NS, sa, Duration.ofHours(1), null);
  }

  @Test
  void onlyAnAuthorizedCallerReadsMetricsAndStatusWhileProbesStayAnonymous() throws Exception {
    TestPki pki = new TestPki(dir, "agent-serving");
    TestPki.Issued serving = pki.issue("agent");
    Path agentToken = Files.writeString(dir.resolve("agent.token"), token("agent"));
    Path kubeconfig = kube.tokenKubeconfig(dir.resolve("agent.kubeconfig"), kube.url(), agentToken);
    String reader = token("reader");
    String stranger = token("stranger");
    try (InProcessAgent agent =
        InProcessAgent.start(
            "--etcd-endpoint=" + etcdUrl,
            "--https-cert-file=" + serving.cert(),
            "--https-key-file=" + serving.key(),
            "--authz=kube",
            "--authz-deny-ttl=1s",
            "--kube=on",
            "--kubeconfig=" + kubeconfig,
            "--pod-name=solo-0",
            "--pod-namespace=" + NS,
            "--member-resource=off",
            "--remove-surplus-members=false")) {
      int port = agent.port();
      SSLContext probe = HttpsClients.anyServer();
      Poll.until(
          "the member is ready, asked without a token",
          Duration.ofSeconds(30),
          () -> HttpsClients.get(probe, port, "/readyz", null).status() == 200);

      HttpsClients.Answer withoutDelegation = HttpsClients.get(probe, port, "/metrics", reader);
      assertThat(withoutDelegation.status())
          .as("the agent may not create TokenReviews yet: the server cannot decide")
          .isEqualTo(503);
      assertThat(withoutDelegation.body()).contains("system:auth-delegator");
      kube.kubectl(
          "create",
          "clusterrolebinding",
          "agent-auth-delegator",
          "--clusterrole=system:auth-delegator",
          "--serviceaccount=" + NS + ":agent");
      Poll.until(
          "a failed review is not cached: the reader is let in once the agent may ask",
          Duration.ofSeconds(30),
          () -> HttpsClients.get(probe, port, "/metrics", reader).status() == 200);

      assertThat(HttpsClients.get(probe, port, "/metrics", reader).body())
          .contains("etcd_member_agent_ready");
      assertThat(HttpsClients.get(probe, port, "/status", reader).status()).isEqualTo(200);
      for (String path : new String[] {"/metrics", "/status"}) {
        HttpsClients.Answer none = HttpsClients.get(probe, port, path, null);
        assertThat(none.status()).as(path + " without a token").isEqualTo(401);
        assertThat(HttpsClients.get(probe, port, path, stranger).status())
            .as(path + " with a token of a ServiceAccount without the role")
            .isEqualTo(403);
        assertThat(HttpsClients.get(probe, port, path, "not-a-token").status())
            .as(path + " with garbage")
            .isEqualTo(401);
      }
      String uid =
          kube.kubectl(
                  "get", "serviceaccount", "reader", "-n", NS, "-o", "jsonpath={.metadata.uid}")
              .strip();
      String expired = kube.signedToken(NS, "reader", uid, Instant.now().minusSeconds(60));
      String stillValid = kube.signedToken(NS, "reader", uid, Instant.now().plusSeconds(600));
      assertThat(HttpsClients.get(probe, port, "/metrics", stillValid).status())
          .as(
              "the same signing, not yet expired: accepted (so the expired one fails on its expiry)")
          .isEqualTo(200);
      HttpsClients.Answer late = HttpsClients.get(probe, port, "/metrics", expired);
      assertThat(late.status()).as("an expired token").isEqualTo(401);
      assertThat(late.body()).containsIgnoringCase("expired");
      assertThat(HttpsClients.get(probe, port, "/readyz?verbose", null).status()).isEqualTo(200);

      String unseen = token("reader");
      kube.stopApiServer();
      try {
        assertThat(HttpsClients.get(probe, port, "/metrics", unseen).status())
            .as("a token never seen while the API server is down")
            .isEqualTo(503);
        assertThat(HttpsClients.get(probe, port, "/status", unseen).status()).isEqualTo(503);
        assertThat(HttpsClients.get(probe, port, "/metrics", reader).status())
            .as("an allowed answer still cached")
            .isEqualTo(200);
        assertThat(HttpsClients.get(probe, port, "/readyz", null).status())
            .as("the API server never touches /readyz")
            .isEqualTo(200);
        assertThat(HttpsClients.get(probe, port, "/livez", null).status()).isEqualTo(200);
      } finally {
        kube.startApiServer();
      }
      assertThat(HttpsClients.get(probe, port, "/metrics", unseen).status())
          .as("asked again once the server is back")
          .isEqualTo(200);
    }
  }
}
