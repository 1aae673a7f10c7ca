package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.Etcdctl;
import io.etcdmemberagent.testing.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The agent on auth-enabled etcd (3.6, 3.5, 3.7, 3.4): each row of the privilege table in
 * docs/compatibility.md, measured against the real version. Users: {@code root} (root role) and
 * {@code observer} (no role at all).
 */
class AuthIT {

  private static final Duration LIMIT = Duration.ofSeconds(30);

  @TempDir Path dir;

  static Stream<String> versions() {
    return Stream.concat(EtcdBinaries.withOldest().stream(), EtcdBinaries.withNewest().stream())
        .distinct();
  }

  /**
   * Whether a user without any role may call {@code Status}: 3.4 asks no one, 3.6.12+ and 3.7 any
   * authenticated user; 3.5 (3.5.30 measured) and 3.6.0–3.6.11 only root.
   */
  private static boolean statusOpenToAnyUser(String version) {
    return !version.equals("3.5");
  }

  private Path password(String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text + "\n");
  }

  private static InProcessAgent agent(
      String endpoint, Path passwordFile, String user, String... extra) {
    List<String> flags =
        new java.util.ArrayList<>(
            List.of("--etcd-endpoint=" + endpoint, "--poll-interval=300ms", "--etcd-timeout=1s"));
    if (user != null) {
      flags.add("--user=" + user);
      flags.add("--password-file=" + passwordFile);
    }
    flags.addAll(List.of(extra));
    return InProcessAgent.start(flags.toArray(String[]::new));
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void readinessAndPromotionWithEachPrivilege(String version) throws IOException {
    try (EtcdCluster cluster = EtcdCluster.start(version, 1)) {
      EtcdMember voter = cluster.member(0);
      Etcdctl ctl = Etcdctl.at(voter.clientUrl());
      ctl.enableAuth("rootpw", "observer:observerpw");
      Etcdctl root = ctl.as("root", "rootpw");
      Path rootPw = password("root", "rootpw");
      Path observerPw = password("observer", "observerpw");
      Path wrongPw = password("wrong", "not-the-password");

      try (InProcessAgent asRoot = agent(voter.clientUrl(), rootPw, "root");
          InProcessAgent asObserver = agent(voter.clientUrl(), observerPw, "observer");
          InProcessAgent wrong = agent(voter.clientUrl(), wrongPw, "root");
          InProcessAgent anonymous = agent(voter.clientUrl(), null, null)) {
        Poll.until("root: ready", LIMIT, () -> asRoot.get("/readyz").status() == 200);
        assertThat(asRoot.get("/status").body()).contains("\"state\":\"Voter\"");

        if (statusOpenToAnyUser(version)) {
          Poll.until("observer: ready", LIMIT, () -> asObserver.get("/readyz").status() == 200);
        } else {
          awaitReason(asObserver, "serving", "PermissionDenied");
          assertThat(asObserver.get("/readyz/serving").body())
              .contains("Status via " + voter.clientUrl(), "etcdserver: permission denied");
          assertThat(asObserver.get("/metrics").body())
              .contains("call=\"local_status\",reason=\"permission_denied\"");
        }

        awaitReason(wrong, "serving", "AuthenticationFailed");
        assertThat(wrong.get("/readyz/serving").body())
            .contains("Authenticate as root via " + voter.clientUrl())
            .contains("authentication failed, invalid user ID or password");
        assertThat(wrong.get("/livez").status()).isEqualTo(200);
        long slowest = 0;
        for (int i = 0; i < 20; i++) {
          long t0 = System.nanoTime();
          assertThat(wrong.get("/readyz").status()).isEqualTo(503);
          slowest = Math.max(slowest, System.nanoTime() - t0);
        }
        System.out.printf(
            "[auth %s] slowest /readyz with a refused password: %d ms%n",
            version, slowest / 1_000_000);
        assertThat(Duration.ofNanos(slowest)).isLessThan(Duration.ofMillis(500));
        // The Secret is fixed: the file is read again and the agent authenticates.
        Files.writeString(wrongPw, "rootpw\n");
        Poll.until(
            "ready once the password file is right",
            LIMIT,
            () -> wrong.get("/readyz").status() == 200);

        if (version.equals("3.4")) {
          Poll.until(
              "anonymous on 3.4: ready", LIMIT, () -> anonymous.get("/readyz").status() == 200);
        } else {
          awaitReason(anonymous, "serving", "AuthenticationFailed");
          assertThat(anonymous.get("/readyz/serving").body()).contains("user name is empty");
        }

        // A restarted member forgets its simple tokens: the agent gets a new one by itself.
        voter.kill();
        Poll.until(
            "root: not ready while etcd is down",
            LIMIT,
            () -> asRoot.get("/readyz").status() == 503);
        voter.restart();
        Poll.until(
            "root: ready again with a new token",
            LIMIT,
            () -> asRoot.get("/readyz").status() == 200);
      }

      // A learner added by root; its agent as observer may look but not promote.
      EtcdMember learner = cluster.newUnaddedMember();
      root.run("member", "add", learner.name(), "--learner", "--peer-urls=" + learner.peerUrl());
      cluster.startJoined(
          learner,
          voter.name() + "=" + voter.peerUrl() + "," + learner.name() + "=" + learner.peerUrl());
      String[] learnerFlags = {
        "--cluster-endpoints=" + voter.clientUrl(),
        "--peer-urls=" + learner.peerUrl(),
        "--learner-poll-interval=100ms",
        "--promote-backoff=100ms",
        "--promote-max-backoff=200ms"
      };
      try (InProcessAgent observer =
          agent(learner.clientUrl(), observerPw, "observer", learnerFlags)) {
        if (statusOpenToAnyUser(version)) {
          Poll.until(
              "observer's promote refused",
              LIMIT,
              () ->
                  java.util.regex.Pattern.compile(
                          "etcd_member_agent_promotions_total\\{result=\"denied\"\\} [1-9]")
                      .matcher(observer.get("/metrics").body())
                      .find());
          assertThat(observer.get("/status").body()).contains("permission denied");
        } else {
          awaitReason(observer, "serving", "PermissionDenied");
        }
        assertThat(observer.get("/readyz").status()).isEqualTo(503);
        assertThat(learnerLine(root, learner)).endsWith("true");
      }
      try (InProcessAgent promoter = agent(learner.clientUrl(), rootPw, "root", learnerFlags)) {
        Poll.until(
            "root's agent promotes its learner and reports it ready",
            LIMIT,
            () -> promoter.get("/readyz").status() == 200);
        assertThat(promoter.get("/metrics").body())
            .contains("etcd_member_agent_promotions_total{result=\"promoted\"} 1.0");
        assertThat(learnerLine(root, learner)).endsWith("false");
      }
    }
  }

  private static String learnerLine(Etcdctl root, EtcdMember learner) {
    return root.run("member", "list")
        .lines()
        .filter(l -> l.contains(learner.peerUrl()))
        .findFirst()
        .orElseThrow()
        .trim();
  }

  /** Waits until /status shows {@code check} failing with {@code reason}. */
  private static void awaitReason(InProcessAgent agent, String check, String reason) {
    try {
      Poll.until(
          check + " failing with " + reason,
          LIMIT,
          () ->
              agent
                  .get("/status")
                  .body()
                  .contains(
                      "{\"name\":\""
                          + check
                          + "\",\"passed\":false,\"reason\":\""
                          + reason
                          + "\""));
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; /status: " + agent.get("/status").body(), e);
    }
  }

  /**
   * With {@code --client-cert-auth} and auth on, etcd takes the client certificate's CN as the
   * user: the agent needs no password, only a certificate for a user with enough privilege. A
   * verified certificate whose CN names no user is refused by 3.5 ("user name not found") and may
   * observe on 3.6+ (measured).
   */
  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("io.etcdmemberagent.testing.EtcdBinaries#versions")
  void aClientCertificatesCommonNameAuthenticatesTheAgent(String version) {
    io.etcdmemberagent.testing.TestPki pki = new io.etcdmemberagent.testing.TestPki(dir, "cn");
    var server = pki.issue("member");
    var root = pki.issue("root");
    var stranger = pki.issue("stranger");
    String endpoint = "https://127.0.0.1:" + io.etcdmemberagent.testing.FreePorts.next();
    Process etcd =
        io.etcdmemberagent.testing.SingleEtcd.start(
            version,
            "cn0",
            dir.resolve("cn0.etcd"),
            endpoint,
            dir.resolve("cn0.log"),
            "--cert-file=" + server.cert(),
            "--key-file=" + server.key(),
            "--client-cert-auth",
            "--trusted-ca-file=" + pki.caCert());
    try {
      Etcdctl asRoot = Etcdctl.at(endpoint).withTls(pki.caCert(), root.cert(), root.key());
      Poll.until(
          "etcd serves over mTLS",
          LIMIT,
          () -> asRoot.attempt("endpoint", "health").exitCode() == 0);
      asRoot.run("user", "add", "root", "--no-password");
      asRoot.run("user", "grant-role", "root", "root");
      asRoot.run("auth", "enable");
      try (InProcessAgent byCertificate =
              InProcessAgent.start(
                  "--etcd-endpoint=" + endpoint,
                  "--cacert=" + pki.caCert(),
                  "--cert=" + root.cert(),
                  "--key=" + root.key(),
                  "--poll-interval=300ms");
          InProcessAgent unknownUser =
              InProcessAgent.start(
                  "--etcd-endpoint=" + endpoint,
                  "--cacert=" + pki.caCert(),
                  "--cert=" + stranger.cert(),
                  "--key=" + stranger.key(),
                  "--poll-interval=300ms")) {
        Poll.until(
            "ready as CN=root without a password",
            LIMIT,
            () -> byCertificate.get("/readyz").status() == 200);
        if (version.equals("3.5")) {
          awaitReason(unknownUser, "serving", "AuthenticationFailed");
          assertThat(unknownUser.get("/readyz/serving").body())
              .contains("etcdserver: user name not found");
        } else {
          // 3.6.12+ answers Status and MemberList for any certificate it verified, user or not
          Poll.until(
              "a CN without a user may still observe",
              LIMIT,
              () -> unknownUser.get("/readyz").status() == 200);
        }
        System.out.printf(
            "[auth %s] CN without a user: %s%n",
            version, unknownUser.get("/readyz/serving").body().trim());
      }
    } finally {
      io.etcdmemberagent.testing.Processes.kill(etcd);
    }
  }

  /** {@code join} as a user without the root role is refused and says why; as root it joins. */
  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("io.etcdmemberagent.testing.EtcdBinaries#versions")
  void joinNeedsRootAndSaysSo(String version) throws IOException {
    try (EtcdCluster cluster = EtcdCluster.start(version, 1);
        io.etcdmemberagent.testing.Pod pod =
            new io.etcdmemberagent.testing.Pod(
                "etcd-joining", EtcdBinaries.etcd(version), dir.resolve("pod"))) {
      EtcdMember voter = cluster.member(0);
      Etcdctl ctl = Etcdctl.at(voter.clientUrl());
      ctl.enableAuth("rootpw", "observer:observerpw");
      Path observerPw = password("observer", "observerpw");
      Path rootPw = password("root", "rootpw");
      int refused =
          pod.join(
              List.of(voter.clientUrl()),
              "--user=observer",
              "--password-file=" + observerPw,
              "--join-timeout=4s");
      assertThat(refused).as(pod.lastJoinOutput).isEqualTo(1);
      assertThat(pod.lastJoinOutput)
          .contains("etcd refused MemberAdd")
          .contains("PermissionDenied; MemberAdd needs a user with the root role");
      int joined = pod.join(List.of(voter.clientUrl()), "--user=root", "--password-file=" + rootPw);
      assertThat(joined).as(pod.lastJoinOutput).isZero();
      assertThat(ctl.as("root", "rootpw").run("member", "list"))
          .contains(pod.peerUrl() + ", , true");
    }
  }
}
