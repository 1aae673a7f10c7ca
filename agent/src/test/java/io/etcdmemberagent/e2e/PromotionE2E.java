package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.api.Member;
import io.etcdmemberagent.testing.AgentLog;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Pod;
import io.etcdmemberagent.testing.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Self-promotion of a learner by its own agent (the real jar), against real clusters of etcd 3.5
 * and 3.4: how soon after our rule holds, never before, and through a leader's death.
 */
class PromotionE2E {

  static Stream<String> versions() {
    return EtcdBinaries.withNewest().stream();
  }

  /** The versions with {@code --max-learners} (3.6+). */
  static Stream<String> severalLearnerVersions() {
    return EtcdBinaries.withNewest().stream().filter(v -> !v.equals("3.5") && !v.equals("3.4"));
  }

  private EtcdCluster cluster;
  private Pod learner;
  private Path podDir;

  @AfterEach
  void cleanUp() throws IOException {
    if (learner != null) {
      learner.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (podDir != null) {
      try (Stream<Path> paths = Files.walk(podDir)) {
        paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private List<String> voters() {
    return Arrays.asList(cluster.clientUrls().split(","));
  }

  private void startClusterWithLearnerPod(String version, int megabytes) throws IOException {
    cluster = EtcdCluster.start(version, 3);
    byte[] value = new byte[768 * 1024];
    new java.util.Random(7).nextBytes(value);
    String leader = cluster.leader().orElseThrow().clientUrl();
    for (int i = 0; i < megabytes * 4 / 3; i++) {
      cluster.client().put(leader, String.format("load/%05d", i), value);
    }
    // Enough raft entries that a few more keep a frozen learner within etcd's 90% check.
    for (int i = 0; i < 200; i++) {
      cluster.client().put(leader, String.format("small/%05d", i), new byte[16]);
    }
    podDir = Files.createTempDirectory("learner-pod-");
    learner = new Pod("etcd-learner", EtcdBinaries.etcd(version), podDir);
    assertThat(learner.join(voters())).as(learner.lastJoinOutput).isZero();
  }

  private Member learnerEntry() {
    return entryOf(learner.peerUrl());
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void aLoadedLearnerIsPromotedWithinTwoPollsOfOurRuleHolding(String version) throws Exception {
    startClusterWithLearnerPod(version, 60);
    AtomicBoolean writing = new AtomicBoolean(true);
    AtomicLong writes = new AtomicLong();
    Thread writer =
        new Thread(
            () -> {
              byte[] small = new byte[1024];
              while (writing.get()) {
                try {
                  cluster.client().put(voters().get(0), "busy/" + (writes.get() % 100), small);
                  writes.incrementAndGet();
                } catch (RuntimeException e) {
                  // the writer only keeps the learner busy; a failed put changes nothing
                }
              }
            });
    writer.start();
    try {
      learner.startAgent(voters(), "--max-lag-entries=200");
      learner.startEtcd();
      Poll.until(
          "the learner promoted", Duration.ofSeconds(120), () -> !learnerEntry().getIsLearner());
    } finally {
      writing.set(false);
      writer.join(10_000);
    }
    Poll.until(
        "the agent's log to show the promotion",
        Duration.ofSeconds(10),
        () -> AgentLog.of(learner.agent().output()).first("promoted").isPresent());
    AgentLog log = AgentLog.of(learner.agent().output());
    String holds = log.first("promotion-decision", "Hold/Stabilizing").orElseThrow();
    String promoted = log.first("promoted", "\"result\":\"promoted\"").orElseThrow();
    // logged only when the check flips; a learner that never lagged by our rule has no such line
    String inSync = log.first("check", "\"name\":\"in-sync\"", "\"passed\":true").orElse(holds);
    long polls = AgentLog.seq(promoted) - AgentLog.seq(holds) + 1;
    System.out.printf(
        "etcd %s: 60 MB learner, %d writes during catch-up: rule first held at poll %d, promoted"
            + " at poll %d (%d polls), %d ms after the rule held, %d ms after in-sync; lag at"
            + " promotion %s%n",
        version,
        writes.get(),
        AgentLog.seq(holds),
        AgentLog.seq(promoted),
        polls,
        AgentLog.between(holds, promoted).toMillis(),
        AgentLog.between(inSync, promoted).toMillis(),
        promoted.replaceAll(".*\"lag\":(\\d+).*", "$1"));
    assertThat(polls).as("promoted on the second poll on which the rule held").isEqualTo(2);
    Poll.until(
        "/readyz 200 as a voter",
        Duration.ofSeconds(30),
        () -> Http.statusOrMinusOne(learner.httpPort(), "/readyz") == 200);
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void aLearnerNotInSyncByOurRuleIsNotPromotedEvenWhereEtcdWouldAccept(String version)
      throws Exception {
    startClusterWithLearnerPod(version, 3);
    learner.startEtcd();
    Poll.until(
        "the learner caught up (serving Status)",
        Duration.ofSeconds(60),
        () -> cluster.client().status(learner.clientUrl()).getIsLearner());
    learner.signalEtcd("STOP");
    String leader = cluster.leader().orElseThrow().clientUrl();
    for (int i = 0; i < 3; i++) {
      cluster.client().put(leader, "after-stop/" + i, new byte[16]);
    }
    learner.startAgent(voters(), "--max-lag-entries=1000");
    awaitTenPolls(learner);
    String status = Http.get(learner.httpPort(), "/status").body();
    assertThat(status)
        .contains("\"reason\":\"LocalSilent\"")
        .doesNotContain("\"result\":\"promoted\"");
    assertThat(learnerEntry().getIsLearner()).as("still a learner").isTrue();

    // etcd itself would have accepted: its check compares raft progress, a frozen learner passes.
    cluster.client().promote(leader, learnerEntry().getID());
    assertThat(learnerEntry().getIsLearner()).isFalse();
    learner.signalEtcd("CONT");
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void theLeaderDyingDuringCatchUpStillEndsWithAVoter(String version) throws Exception {
    startClusterWithLearnerPod(version, 30);
    EtcdMember leader = cluster.leader().orElseThrow();
    learner.startAgent(voters());
    learner.startEtcd();
    leader.kill();
    Poll.until(
        "the learner promoted by its agent after the leader died",
        Duration.ofSeconds(120),
        () -> {
          String voter =
              cluster.members().stream()
                  .filter(EtcdMember::running)
                  .findFirst()
                  .orElseThrow()
                  .clientUrl();
          return cluster.client().members(voter).stream()
              .anyMatch(m -> m.getPeerURLsList().contains(learner.peerUrl()) && !m.getIsLearner());
        });
    assertThat(Http.get(learner.httpPort(), "/status").body()).contains("\"result\":\"promoted\"");
  }

  /**
   * etcd 3.6+ with {@code --max-learners=2}: two pods join at once and are both learners at the
   * same time; each agent promotes only its own member, by our rule: the healthy one is promoted,
   * the frozen one beside it never is, although etcd's 90% check accepts it.
   */
  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("severalLearnerVersions")
  void twoLearnersAtOnceEachPromotedByItsOwnAgentAndAFrozenOneNever(String version)
      throws Exception {
    cluster = EtcdCluster.startWithFlags(version, 3, List.of("--max-learners=2"));
    String leader = cluster.leader().orElseThrow().clientUrl();
    for (int i = 0; i < 300; i++) {
      cluster.client().put(leader, String.format("small/%05d", i), new byte[64]);
    }
    podDir = Files.createTempDirectory("learner-pods-");
    learner = new Pod("etcd-healthy", EtcdBinaries.etcd(version), podDir);
    try (Pod frozen = new Pod("etcd-frozen", EtcdBinaries.etcd(version), podDir)) {
      // Both pods start at once, as with podManagementPolicy Parallel; each etcd starts as soon as
      // its own join has written the env file (the second join waits for the first to start).
      Map<Pod, AgentProcess> joins =
          new java.util.LinkedHashMap<>(
              Map.of(learner, learner.startJoin(voters()), frozen, frozen.startJoin(voters())));
      Poll.until(
          "both joins done, each etcd started after its own",
          Duration.ofSeconds(120),
          () -> {
            for (var it = joins.entrySet().iterator(); it.hasNext(); ) {
              var join = it.next();
              if (!join.getValue().process().isAlive()) {
                assertThat(join.getValue().waitFor(5)).as(join.getValue().output()).isZero();
                join.getValue().close();
                join.getKey().startEtcd("--max-learners=2");
                it.remove();
              }
            }
            return joins.isEmpty();
          });
      Poll.until(
          "two learners in the cluster at once",
          Duration.ofSeconds(60),
          () ->
              cluster.client().members(leader).stream().filter(Member::getIsLearner).count() == 2);
      for (Pod pod : List.of(learner, frozen)) {
        try {
          Poll.until(
              pod.name() + " caught up (serving Status)",
              Duration.ofSeconds(60),
              () -> cluster.client().status(pod.clientUrl()).getIsLearner());
        } catch (AssertionError e) {
          throw new AssertionError(e.getMessage() + "; etcd log: " + pod.etcdLogTail(), e);
        }
      }
      frozen.signalEtcd("STOP");
      for (int i = 0; i < 3; i++) {
        cluster.client().put(leader, "after-stop/" + i, new byte[16]);
      }
      frozen.startAgent(voters(), "--max-lag-entries=1000");
      learner.startAgent(voters(), "--max-lag-entries=1000");

      Poll.until(
          "the healthy learner promoted by its own agent and ready",
          Duration.ofSeconds(60),
          () -> Http.statusOrMinusOne(learner.httpPort(), "/readyz") == 200);
      awaitTenPolls(frozen);
      String frozenStatus = Http.get(frozen.httpPort(), "/status").body();
      assertThat(frozenStatus).doesNotContain("\"result\":\"promoted\"");
      assertThat(Http.statusOrMinusOne(frozen.httpPort(), "/readyz")).isEqualTo(503);
      Member frozenEntry = entryOf(frozen.peerUrl());
      assertThat(frozenEntry.getIsLearner()).as("the frozen learner is still a learner").isTrue();
      assertThat(entryOf(learner.peerUrl()).getIsLearner()).isFalse();
      List<String> promotes =
          AgentLog.of(learner.agent().output()).lines().stream()
              .filter(l -> l.contains("\"event\":\"promoted\""))
              .toList();
      assertThat(promotes)
          .as("the healthy learner's agent promoted only its own member")
          .hasSize(1)
          .allMatch(l -> l.contains(Long.toHexString(entryOf(learner.peerUrl()).getID())));

      // etcd's own check would have let the frozen learner through.
      cluster.client().promote(cluster.leader().orElseThrow().clientUrl(), frozenEntry.getID());
      assertThat(entryOf(frozen.peerUrl()).getIsLearner()).isFalse();
      frozen.signalEtcd("CONT");
    }
  }

  /** Waits until the pod's agent has polled at least ten times. */
  private static void awaitTenPolls(Pod pod) {
    Poll.until(
        "ten polls of " + pod.name() + "'s agent",
        Duration.ofSeconds(30),
        () ->
            Http.get(pod.httpPort(), "/status").body().matches("(?s).*\"sequence\":([1-9]\\d+).*"));
  }

  private Member entryOf(String peerUrl) {
    String voter = cluster.leader().orElseThrow().clientUrl();
    return cluster.client().members(voter).stream()
        .filter(m -> m.getPeerURLsList().contains(peerUrl))
        .findFirst()
        .orElseThrow();
  }
}
