package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Poll;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The run loop against real etcd clusters (3.5 and 3.4): what it reports, and how fast. */
class ObserveMemberIT {

  private static final Duration POLL = Duration.ofMillis(500);
  private static final Duration TIMEOUT = Duration.ofSeconds(1);

  /** Scheduling slack on a loaded 2-core CI machine; the measured times are printed. */
  private static final Duration SLACK = Duration.ofSeconds(1);

  static Stream<String> versions() {
    return EtcdBinaries.withOldest().stream();
  }

  private static InProcessAgent agentFor(EtcdMember member, String... extra) {
    String[] flags =
        Stream.concat(
                Stream.of(
                    "--etcd-endpoint=" + member.clientUrl(),
                    "--poll-interval=" + POLL.toMillis() + "ms",
                    "--etcd-timeout=" + TIMEOUT.toMillis() + "ms"),
                Stream.of(extra))
            .toArray(String[]::new);
    return InProcessAgent.start(flags);
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void aVoterReportsReady(String version) {
    try (EtcdCluster cluster = EtcdCluster.start(version, 3);
        InProcessAgent agent = agentFor(cluster.member(1))) {
      Poll.until("/readyz 200", Duration.ofSeconds(15), () -> agent.get("/readyz").status() == 200);
      assertThat(agent.get("/readyz").body()).isEqualTo("ok\n");
      assertThat(agent.get("/readyz/voter").body()).isEqualTo("[+]voter ok\n");
      Http.Answer verbose = agent.get("/readyz?verbose");
      assertThat(verbose.body())
          .contains("[+]serving ok", "[+]member ok", "[+]voter ok", "[+]leader ok")
          .contains("[+]in-sync ok", "[+]alarms ok", "readyz check passed");
      assertThat(agent.get("/status").body())
          .contains("\"ready\":true", "\"state\":\"Voter\"", "\"version\":\"" + version);
      assertThat(agent.get("/metrics").body())
          .contains("etcd_member_agent_is_voter 1.0", "etcd_member_agent_ready 1.0")
          .contains("etcd_member_agent_is_learner 0.0", "etcd_member_agent_lag_entries ");
      assertThat(agent.get("/livez").status()).isEqualTo(200);
      assertNewerStatusFields(version, agent);
      assertPromotingAVoterIsAlreadyVoter(cluster.member(1));
    }
  }

  /**
   * etcd's answer to promoting a voter, "can only promote a learner member", is a prefix of the
   * not-in-sync text; matched whole, it settles as already a voter, never as "not in sync".
   */
  private static void assertPromotingAVoterIsAlreadyVoter(EtcdMember voter) {
    try (var gateway =
        new io.etcdmemberagent.etcd.GrpcEtcdGateway(
            io.etcdmemberagent.etcd.ClientTls.none(), Duration.ofSeconds(2))) {
      var status = gateway.status(voter.clientUrl());
      long id = ((io.etcdmemberagent.core.LocalObservation.Answered) status).status().memberId();
      var answer = gateway.promote(voter.clientUrl(), id);
      assertThat(answer).isInstanceOf(io.etcdmemberagent.core.ChangeAnswer.Error.class);
      var error = (io.etcdmemberagent.core.ChangeAnswer.Error) answer;
      assertThat(error.message()).isEqualTo("etcdserver: can only promote a learner member");
      assertThat(io.etcdmemberagent.core.promotion.PromoteResult.ofError(error))
          .isEqualTo(io.etcdmemberagent.core.promotion.PromoteResult.ALREADY_VOTER);
    }
  }

  /**
   * etcd 3.6+ {@code Status} fields 11–13, which jetcd's stubs lack, read from the unknown fields:
   * the storage version, etcd's own quota (here its default, 2 GiB), no downgrade; absent before.
   */
  private static void assertNewerStatusFields(String version, InProcessAgent agent) {
    boolean before36 = version.equals("3.5") || version.equals("3.4");
    if (!before36) {
      // etcd reports no storage version, then the previous one (3.5.0 on a new 3.6 member), and
      // its own a few seconds after the cluster version is set
      Poll.until(
          "etcd to report storage version " + version + ".0",
          Duration.ofSeconds(30),
          () -> agent.get("/status").body().contains("\"storageVersion\":\"" + version + ".0\""));
    }
    String status = agent.get("/status").body();
    String metrics = agent.get("/metrics").body();
    if (before36) {
      assertThat(status).contains("\"storageVersion\":null", "\"dbSizeQuota\":null");
      assertThat(metrics).contains("etcd_member_agent_db_size_quota_bytes NaN");
      return;
    }
    assertThat(status)
        .contains("\"storageVersion\":\"" + version + ".0\"", "\"dbSizeQuota\":2147483648")
        .contains("\"downgrade\":{\"enabled\":false,\"targetVersion\":\"\"}");
    assertThat(metrics)
        .contains("etcd_member_agent_db_size_quota_bytes 2.147483648E9")
        .contains("etcd_member_agent_downgrade_enabled 0.0")
        .contains("storage_version=\"" + version + ".0\"")
        .contains("version=\"" + EtcdBinaries.patchVersion(version) + "\"");
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void aLearnerIsReportedAsSuchNeverReadyAndObservedOnly(String version) {
    try (EtcdCluster cluster = EtcdCluster.start(version, 3)) {
      EtcdMember learner = cluster.addMember(true);
      try (InProcessAgent agent =
          agentFor(
              learner,
              "--cluster-endpoints=" + cluster.clientUrls(),
              "--peer-urls=" + learner.peerUrl(),
              "--promote=false")) {
        Poll.until(
            "the unstarted learner to be reported NotStarted",
            Duration.ofSeconds(15),
            () -> agent.get("/readyz/voter").body().contains("NotStarted"));
        assertThat(agent.get("/readyz/serving").status()).isEqualTo(503);
        assertThat(agent.get("/status").body()).contains("\"state\":\"NotStarted\"");

        cluster.startJoined(learner);
        Poll.until(
            "the started learner to be reported Learner",
            Duration.ofSeconds(30),
            () ->
                agent.get("/status").body().contains("\"state\":\"Learner\"")
                    && agent.get("/readyz/serving").status() == 200);
        Http.Answer readyz = agent.get("/readyz?verbose");
        assertThat(readyz.status()).isEqualTo(503);
        assertThat(readyz.body())
            .contains("[+]serving ok", "[-]voter failed: not a started voting member: Learner");
        assertThat(agent.get("/readyz/voter").status()).isEqualTo(503);
        assertThat(agent.get("/readyz?exclude=voter").status())
            .as("a learner in sync passes every other check")
            .isEqualTo(200);
        assertThat(agent.get("/metrics").body()).contains("etcd_member_agent_is_learner 1.0");
        Poll.until(
            "observe-only: the rule holds, nothing is promoted",
            Duration.ofSeconds(15),
            () -> agent.get("/status").body().contains("\"decision\":\"ObserveOnly\""));
        assertThat(agent.get("/status").body()).contains("\"history\":[]");
        assertThat(cluster.client().members(cluster.member(0).clientUrl()))
            .filteredOn(m -> m.getPeerURLsList().contains(learner.peerUrl()))
            .allMatch(m -> m.getIsLearner());

        // A learner refuses MemberList: UNAVAILABLE before 3.6, FAILED_PRECONDITION from 3.6,
        // the same text; classified by the text, never as unreachable.
        try (var gateway =
            new io.etcdmemberagent.etcd.GrpcEtcdGateway(
                io.etcdmemberagent.etcd.ClientTls.none(), Duration.ofSeconds(2))) {
          var refused = gateway.memberList(learner.clientUrl());
          assertThat(refused).isInstanceOf(io.etcdmemberagent.core.Membership.Unknown.class);
          var unknown = (io.etcdmemberagent.core.Membership.Unknown) refused;
          assertThat(unknown.failure())
              .isEqualTo(io.etcdmemberagent.core.CallFailure.LEARNER_REJECTED);
          assertThat(unknown.reason())
              .contains(
                  version.equals("3.5") || version.equals("3.4")
                      ? "UNAVAILABLE"
                      : "FAILED_PRECONDITION")
              .contains("etcdserver: rpc not supported for learner");
        }
      }
    }
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void killingTheLocalMemberTurnsReadinessOffWithinPollPlusTimeout(String version) {
    try (EtcdCluster cluster = EtcdCluster.start(version, 3);
        InProcessAgent agent = agentFor(cluster.member(0))) {
      Poll.until("/readyz 200", Duration.ofSeconds(15), () -> agent.get("/readyz").status() == 200);
      cluster.member(0).kill();
      Duration took =
          Poll.until(
              "/readyz 503 after kill",
              POLL.plus(TIMEOUT).plus(SLACK),
              () -> agent.get("/readyz").status() == 503);
      System.out.printf("etcd %s: kill -> /readyz 503 in %d ms%n", version, took.toMillis());
      assertThat(agent.get("/readyz/serving").body()).contains("not listening");
      assertThat(agent.get("/livez").status()).isEqualTo(200);

      cluster.member(0).restart();
      Poll.until(
          "/readyz 200 after restart",
          Duration.ofSeconds(30),
          () -> agent.get("/readyz").status() == 200);
    }
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void aHungLocalMemberNeverBlocksReadyz(String version) {
    try (EtcdCluster cluster = EtcdCluster.start(version, 3);
        InProcessAgent agent = agentFor(cluster.member(2))) {
      Poll.until("/readyz 200", Duration.ofSeconds(15), () -> agent.get("/readyz").status() == 200);
      cluster.member(2).pause();
      long slowest = 0;
      long start = System.nanoTime();
      int status = 200;
      while (status == 200
          && System.nanoTime() - start < POLL.plus(TIMEOUT).plus(SLACK).toNanos()) {
        long before = System.nanoTime();
        status = agent.get("/readyz").status();
        slowest = Math.max(slowest, System.nanoTime() - before);
      }
      long took = (System.nanoTime() - start) / 1_000_000;
      System.out.printf(
          "etcd %s: SIGSTOP -> /readyz 503 in %d ms, slowest answer %d ms%n",
          version, took, slowest / 1_000_000);
      assertThat(status).as("/readyz after SIGSTOP within poll + timeout").isEqualTo(503);
      assertThat(slowest).as("/readyz never waits on etcd").isLessThan(TIMEOUT.toNanos());
      assertThat(agent.get("/readyz/serving").body()).contains("no answer within 1000ms");

      cluster.member(2).resume();
      Poll.until(
          "/readyz 200 after SIGCONT",
          Duration.ofSeconds(30),
          () -> agent.get("/readyz").status() == 200);
    }
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void aMinorityMemberReportsNoLeaderUntilReElection(String version) {
    try (EtcdCluster cluster = EtcdCluster.start(version, 3)) {
      EtcdMember leader = cluster.leader().orElseThrow();
      EtcdMember watched =
          cluster.members().stream().filter(m -> m != leader).findFirst().orElseThrow();
      EtcdMember other =
          cluster.members().stream()
              .filter(m -> m != leader && m != watched)
              .findFirst()
              .orElseThrow();
      try (InProcessAgent agent = agentFor(watched)) {
        Poll.until(
            "/readyz 200", Duration.ofSeconds(15), () -> agent.get("/readyz").status() == 200);
        leader.pause();
        other.pause();
        Poll.until(
            "leader check failing on the minority member",
            Duration.ofSeconds(15),
            () -> agent.get("/readyz/leader").body().contains("[-]leader failed"));
        assertThat(agent.get("/readyz").status()).isEqualTo(503);
        assertThat(agent.get("/status").body()).contains("\"state\":\"Voter\"");

        leader.resume();
        other.resume();
        Poll.until(
            "leader check passing after re-election",
            Duration.ofSeconds(30),
            () -> agent.get("/readyz/leader").status() == 200);
        Poll.until(
            "/readyz 200", Duration.ofSeconds(15), () -> agent.get("/readyz").status() == 200);
      }
    }
  }
}
