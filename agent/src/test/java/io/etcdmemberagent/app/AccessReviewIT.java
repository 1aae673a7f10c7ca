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
    for (String sa :
        new String[] {
          "agent", "flooded-agent", "legacy-agent", "reader", "legacy-reader", "stranger"
        }) {
      kube.kubectl("create", "serviceaccount", sa, "-n", NS);
    }
    kube.grantMetricsRead("metrics-reader", "reader-reads-metrics", NS, "reader");
    kube.grantNonResourceMetricsRead(
        "legacy-metrics-reader", "legacy-reader-reads-metrics", NS, "legacy-reader");
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

  /**
   * An agent serving HTTPS with {@code --authz=kube}, asking as the ServiceAccount {@code account},
   * once its member is ready (asked without a token).
   */
  InProcessAgent readyAgent(String account, String... extra) throws Exception {
    TestPki.Issued serving = new TestPki(dir, account + "-serving").issue("agent");
    Path agentToken = Files.writeString(dir.resolve(account + ".token"), token(account));
    Path kubeconfig =
        kube.tokenKubeconfig(dir.resolve(account + ".kubeconfig"), kube.url(), agentToken);
    java.util.List<String> args =
        new java.util.ArrayList<>(
            java.util.List.of(
                "--etcd-endpoint=" + etcdUrl,
                "--https-cert-file=" + serving.cert(),
                "--https-key-file=" + serving.key(),
                "--authz=kube",
                "--kube=on",
                "--kubeconfig=" + kubeconfig,
                "--pod-name=solo-0",
                "--pod-namespace=" + NS,
                "--member-resource=off",
                "--remove-surplus-members=false"));
    args.addAll(java.util.List.of(extra));
    InProcessAgent agent = InProcessAgent.start(args.toArray(String[]::new));
    SSLContext any = HttpsClients.anyServer();
    try {
      Poll.until(
          "the member is ready, asked without a token",
          Duration.ofSeconds(30),
          () -> HttpsClients.get(any, agent.port(), "/readyz", null).status() == 200);
    } catch (RuntimeException | AssertionError e) {
      agent.close();
      throw e;
    }
    return agent;
  }

  @Test
  void onlyAnAuthorizedCallerReadsMetricsAndStatusWhileProbesStayAnonymous() throws Exception {
    String reader = token("reader");
    String stranger = token("stranger");
    try (InProcessAgent agent = readyAgent("agent", "--authz-deny-ttl=1s")) {
      int port = agent.port();
      SSLContext probe = HttpsClients.anyServer();

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
        HttpsClients.Answer refused = HttpsClients.get(probe, port, path, stranger);
        assertThat(refused.status())
            .as(path + " with a token of a ServiceAccount without the role")
            .isEqualTo(403);
        assertThat(refused.body())
            .contains(
                "a Role in namespace access must grant get on etcdmembers" + path,
                "etcd-member-agent.io");
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

  /**
   * 32 clients send random bearer tokens to /metrics while the API server is paused (SIGSTOP: every
   * review hangs until the agent's client gives up). The reviews are bounded and run beside the
   * request threads, so the kubelet's probe (a new TLS connection each time, 1 s timeout) is
   * answered throughout.
   */
  @Test
  void probesNeverQueueBehindReviewsOfAPausedApiServer() throws Exception {
    kube.kubectl(
        "create",
        "clusterrolebinding",
        "flooded-agent-auth-delegator",
        "--clusterrole=system:auth-delegator",
        "--serviceaccount=" + NS + ":flooded-agent");
    String reader = token("reader");
    try (InProcessAgent agent = readyAgent("flooded-agent")) {
      int port = agent.port();
      SSLContext any = HttpsClients.anyServer();
      Poll.until(
          "the reader is let in",
          Duration.ofSeconds(30),
          () -> HttpsClients.get(any, port, "/metrics", reader).status() == 200);

      long apiServer = kube.apiServer().pid();
      java.util.concurrent.atomic.AtomicBoolean flooding =
          new java.util.concurrent.atomic.AtomicBoolean(true);
      java.util.concurrent.atomic.AtomicInteger floodAnswers =
          new java.util.concurrent.atomic.AtomicInteger();
      java.util.Map<Integer, Integer> floodStatuses =
          new java.util.concurrent.ConcurrentHashMap<>();
      java.util.List<Thread> flood = new java.util.ArrayList<>();
      java.util.List<Long> probeMillis = new java.util.ArrayList<>();
      java.util.List<Integer> probeStatuses = new java.util.ArrayList<>();
      java.util.List<String> notReady = new java.util.ArrayList<>();
      new ProcessBuilder("kill", "-STOP", Long.toString(apiServer)).start().waitFor();
      try {
        for (int i = 0; i < 32; i++) {
          Thread t =
              new Thread(
                  () -> {
                    java.util.Random random = new java.util.Random();
                    while (flooding.get()) {
                      int status =
                          HttpsClients.statusWithToken(
                              any, port, "/metrics", Long.toHexString(random.nextLong()));
                      floodStatuses.merge(status, 1, Integer::sum);
                      floodAnswers.incrementAndGet();
                    }
                  },
                  "flood-" + i);
          t.setDaemon(true);
          t.start();
          flood.add(t);
        }
        long end = System.nanoTime() + Duration.ofSeconds(8).toNanos();
        while (System.nanoTime() < end) {
          long started = System.nanoTime();
          int status;
          try {
            HttpsClients.Answer answer = HttpsClients.get(any, port, "/readyz?verbose", null);
            status = answer.status();
            if (status != 200) {
              notReady.add(answer.body());
            }
          } catch (java.io.UncheckedIOException e) {
            status = -1;
          }
          probeMillis.add((System.nanoTime() - started) / 1_000_000);
          probeStatuses.add(status);
        }
        assertThat(HttpsClients.get(any, port, "/metrics", reader).status())
            .as("a reader whose answer is cached is served during the flood")
            .isEqualTo(200);
      } finally {
        new ProcessBuilder("kill", "-CONT", Long.toString(apiServer)).start().waitFor();
        flooding.set(false);
        for (Thread t : flood) {
          t.join(15_000);
        }
      }
      java.util.List<Long> sorted = probeMillis.stream().sorted().toList();
      long p99 = sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1);
      System.out.printf(
          "[authz flood] %d probes, p50 %d ms, p99 %d ms, max %d ms; %d flood answers %s%n",
          sorted.size(),
          sorted.get(sorted.size() / 2),
          p99,
          sorted.get(sorted.size() - 1),
          floodAnswers.get(),
          floodStatuses);
      assertThat(probeStatuses).as("every probe answered 200: %s", notReady).containsOnly(200);
      assertThat(p99).as("the probe's p99 against its 1 s timeout").isLessThan(1000);
      assertThat(floodStatuses).as("the flood was refused, not let in").doesNotContainKey(200);
    }
  }

  /**
   * {@code --authz-attributes=non-resource} keeps the previous contract: a ClusterRole's {@code
   * nonResourceURLs} grant, and the namespaced Role does not.
   */
  @Test
  void theNonResourceModeAsksForThePath() throws Exception {
    kube.kubectl(
        "create",
        "clusterrolebinding",
        "legacy-agent-auth-delegator",
        "--clusterrole=system:auth-delegator",
        "--serviceaccount=" + NS + ":legacy-agent");
    String legacy = token("legacy-reader");
    String reader = token("reader");
    try (InProcessAgent agent = readyAgent("legacy-agent", "--authz-attributes=non-resource")) {
      SSLContext any = HttpsClients.anyServer();
      Poll.until(
          "the ClusterRole's reader is let in",
          Duration.ofSeconds(30),
          () -> HttpsClients.get(any, agent.port(), "/metrics", legacy).status() == 200);
      assertThat(HttpsClients.get(any, agent.port(), "/status", reader).status())
          .as("the namespaced Role grants nothing in this mode")
          .isEqualTo(403);
    }
  }
}
