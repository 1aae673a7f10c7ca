package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.api.Member;
import io.etcdmemberagent.kube.FakeKubeApi;
import io.etcdmemberagent.testing.AgentLog;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Faults around one agent (the real jar) next to a member of a real three-member etcd cluster, with
 * a history recorded all along and the invariants of {@link Invariants} checked over all of it:
 * ready only for a healthy voter, ready again after every fault, no flapping under short pauses,
 * the Pod condition following readiness with no redundant patch, promotes only by the rule. The
 * learner, promotion, API and bad-endpoint faults live in {@code LearnerFaultsE2E} and {@code
 * EndpointFaultsE2E}.
 */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#withNewest")
class FaultInjectionE2E {

  @Parameter String version;

  private final Resources resources = new Resources();

  private <T extends AutoCloseable> T keep(T resource) {
    return resources.keep(resource);
  }

  @AfterEach
  void cleanUp() throws Exception {
    resources.close();
  }

  private static Supplier<List<String>> othersThan(EtcdCluster cluster, EtcdMember local) {
    return () ->
        cluster.members().stream()
            .filter(m -> m != local && m.running())
            .map(EtcdMember::clientUrl)
            .toList();
  }

  /**
   * The real jar next to {@code local}, reaching it at {@code endpoint}, recorded with the truth
   * read at {@code truthUrl}, ready and published.
   */
  private FaultRig readyAgent(
      EtcdCluster cluster, EtcdMember local, String endpoint, String truthUrl, String... extra) {
    FaultRig rig = keep(new FaultRig(true));
    rig.startAgent(endpoint, othersThan(cluster, local).get(), extra);
    rig.record(truthUrl, othersThan(cluster, local));
    rig.awaitReady("start");
    rig.awaitCondition("True");
    return rig;
  }

  /** SIGSTOP for {@code pause}, SIGCONT, {@code gap}; {@code times} times. */
  private static void pauses(EtcdMember member, int times, Duration pause, Duration gap)
      throws InterruptedException {
    for (int i = 0; i < times; i++) {
      member.pause();
      hold(pause);
      member.resume();
      hold(gap);
    }
  }

  private static void hold(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis()); // the length of a fault or a steady window, not a wait for state
  }

  @Test
  void localEtcdKilledHungPausedAndRestarted() throws Exception {
    EtcdCluster cluster = keep(EtcdCluster.start(version, 3));
    EtcdMember local = cluster.member(0);
    long id = cluster.client().memberId(local.clientUrl());
    FaultRig rig = readyAgent(cluster, local, local.clientUrl(), local.clientUrl());

    rig.mark(History.Kind.STEADY_BEGINS, "nothing happens");
    hold(Duration.ofSeconds(3));
    rig.mark(History.Kind.STEADY_ENDS, "nothing happens");

    rig.mark(History.Kind.FAULT_BEGINS, "etcd killed");
    local.kill();
    rig.awaitNotReady("etcd killed");
    rig.awaitCondition("False");
    local.restart();
    rig.mark(History.Kind.FAULT_ENDS, "etcd restarted");
    rig.awaitReady("etcd restarted");

    rig.mark(History.Kind.FAULT_BEGINS, "etcd hung (SIGSTOP) for 3 s, longer than the timeout");
    local.pause();
    rig.awaitNotReady("etcd hung");
    hold(Duration.ofSeconds(3));
    local.resume();
    rig.mark(History.Kind.FAULT_ENDS, "etcd resumed");
    rig.awaitReady("etcd resumed");
    rig.awaitCondition("True");

    rig.mark(History.Kind.STEADY_BEGINS, "eight 200 ms pauses, shorter than the etcd timeout");
    pauses(local, 8, Duration.ofMillis(200), Duration.ofMillis(600));
    rig.mark(History.Kind.STEADY_ENDS, "eight 200 ms pauses, shorter than the etcd timeout");

    rig.awaitCondition("True");
    History.Snapshot h = rig.assertInvariants(id, 5000);
    assertThat(h.verdicts()).as("the faults were seen").anyMatch(v -> v.readyz() == 503);
    assertThat(readySequence(rig.publication))
        .as("the ready condition after each patch: both faults reached the Pod")
        .containsSubsequence("True", "False", "True", "False", "True");
  }

  /**
   * Pauses longer than the etcd timeout, again and again, watched by two agents at once: with the
   * default threshold each pause is reported (the truth: the member did not answer); with {@code
   * --ready-success-threshold=6} the healthy gaps between pauses are too short to be ready again,
   * so the member stays out once. The first pause is the leader's: the rest of a poll that found it
   * silent waits on a cluster electing a new leader (the alarm list goes through raft), and when it
   * wakes it first answers from the term it no longer leads; neither may keep it ready.
   */
  @Test
  void repeatedLongPausesFlapOnlyWithoutHysteresis() throws Exception {
    EtcdBinaries.onThePrimaryOnly(version, "the agent's hysteresis under SIGSTOP");
    EtcdCluster cluster = keep(EtcdCluster.start(version, 3));
    EtcdMember local = cluster.leader().orElseThrow();
    long id = cluster.client().memberId(local.clientUrl());
    String url = local.clientUrl();
    FaultRig plain = readyAgent(cluster, local, url, url);
    FaultRig damped = readyAgent(cluster, local, url, url, "--ready-success-threshold=6");
    List<FaultRig> rigs = List.of(plain, damped);

    rigs.forEach(r -> r.mark(History.Kind.FAULT_BEGINS, "four 2 s pauses (SIGSTOP), 1 s apart"));
    // a poll begun in a pause's last second is answered when it ends: at most four healthy polls
    // (at 500 ms) fit before the next pause, fewer than the threshold of six
    pauses(local, 4, Duration.ofSeconds(2), Duration.ofSeconds(1));
    rigs.forEach(r -> r.mark(History.Kind.FAULT_ENDS, "pauses over"));
    for (FaultRig r : rigs) {
      r.awaitReady("pauses over");
      r.awaitCondition("True");
    }

    History.Snapshot plainHistory = plain.assertInvariants(id, 5000);
    int plainFalls = fallsDuringTheFault(plainHistory);
    int dampedFalls = fallsDuringTheFault(damped.assertInvariants(id, 5000));
    long begins = plainHistory.marks(History.Kind.FAULT_BEGINS).get(0).atNanos();
    long out =
        plainHistory
            .firstVerdictAfter(begins, v -> !v.ready())
            .map(v -> Duration.ofNanos(v.atNanos() - begins).toMillis())
            .orElseThrow();
    long oldTerm =
        plain.log().lines().stream().filter(l -> l.contains("right after it was silent")).count();
    System.out.println(
        "[fault] /readyz fell "
            + plainFalls
            + " times, "
            + dampedFalls
            + " with threshold 6; out "
            + out
            + " ms after the leader froze; "
            + oldTerm
            + " log lines on answers from its old term");
    assertThat(out)
        .as("out within a poll interval and one etcd timeout, not waiting for the election")
        .isLessThanOrEqualTo(FaultRig.DETECTION.toMillis());
    assertThat(plainFalls).as("without hysteresis every pause is reported").isGreaterThan(1);
    assertThat(dampedFalls).as("with hysteresis the member stays out once").isEqualTo(1);
  }

  /** How often /readyz went from 200 to anything else between the first fault's marks. */
  private static int fallsDuringTheFault(History.Snapshot h) {
    long begins = h.marks(History.Kind.FAULT_BEGINS).get(0).atNanos();
    long ends = h.marks(History.Kind.FAULT_ENDS).get(0).atNanos();
    int falls = 0;
    boolean wasReady = true;
    for (History.Verdict v : h.verdicts()) {
      if (v.atNanos() >= begins && v.atNanos() <= ends) {
        falls += wasReady && !v.ready() ? 1 : 0;
        wasReady = v.ready();
      }
    }
    return falls;
  }

  @Test
  void agentCutOffFromItsMemberBySlowSilentAndRefusingLinks() throws Exception {
    EtcdBinaries.onThePrimaryOnly(version, "the agent's own link, cut by a proxy");
    EtcdCluster cluster = keep(EtcdCluster.start(version, 3));
    EtcdMember local = cluster.member(0);
    long id = cluster.client().memberId(local.clientUrl());
    TcpProxy link = keep(TcpProxy.inFrontOf(local.clientUrl()));
    // the truth goes through the same link: "the local member answered" as the agent can see it
    FaultRig rig = readyAgent(cluster, local, link.url(), link.url());

    link.mode(new TcpProxy.Mode.Delay(Duration.ofMillis(80), Duration.ofMillis(40)));
    rig.mark(History.Kind.STEADY_BEGINS, "80±40 ms per chunk on the link, below the timeout");
    hold(Duration.ofSeconds(4));
    rig.mark(History.Kind.STEADY_ENDS, "80±40 ms per chunk on the link, below the timeout");

    rig.mark(History.Kind.FAULT_BEGINS, "link silent (blackhole)");
    link.mode(TcpProxy.BLACKHOLE);
    rig.awaitNotReady("link silent");
    hold(Duration.ofSeconds(2));
    link.mode(TcpProxy.PASS);
    rig.mark(History.Kind.FAULT_ENDS, "link back");
    rig.awaitReady("link back");

    rig.mark(History.Kind.FAULT_BEGINS, "link refusing (connections reset)");
    link.mode(TcpProxy.DROP);
    rig.awaitNotReady("link refusing");
    hold(Duration.ofSeconds(2));
    link.mode(TcpProxy.PASS);
    rig.mark(History.Kind.FAULT_ENDS, "link back");
    rig.awaitReady("link back");

    rig.awaitCondition("True");
    rig.assertInvariants(id, 5000);
  }

  @Test
  void leaderKilledThenQuorumLostAndRegained() throws Exception {
    EtcdCluster cluster = keep(EtcdCluster.start(version, 3));
    EtcdMember leader = cluster.leader().orElseThrow();
    EtcdMember local =
        cluster.members().stream().filter(m -> m != leader).findFirst().orElseThrow();
    long id = cluster.client().memberId(local.clientUrl());
    FaultRig rig = readyAgent(cluster, local, local.clientUrl(), local.clientUrl());

    rig.mark(History.Kind.FAULT_BEGINS, "leader killed");
    leader.kill();
    cluster.awaitLeader(Duration.ofSeconds(15));
    rig.mark(History.Kind.FAULT_ENDS, "a new leader");
    rig.awaitReady("a new leader");
    leader.restart();
    Poll.until(
        "the old leader back as a follower",
        Duration.ofSeconds(15),
        () -> cluster.client().status(leader.clientUrl(), 500).getLeader() != 0);

    List<EtcdMember> others = cluster.members().stream().filter(m -> m != local).toList();
    rig.mark(History.Kind.FAULT_BEGINS, "quorum lost (both other members killed)");
    others.forEach(EtcdMember::kill);
    rig.awaitNotReady("quorum lost");
    rig.awaitCondition("False");
    hold(Duration.ofSeconds(2));
    others.forEach(EtcdMember::restart);
    rig.mark(History.Kind.FAULT_ENDS, "quorum regained");
    rig.awaitReady("quorum regained");
    rig.awaitCondition("True");

    History.Snapshot h = rig.assertInvariants(id, 5000);
    assertThat(h.truths())
        .as("quorum loss was seen")
        .anyMatch(t -> t.answered() && !t.leaderKnown());
  }

  /**
   * On the real API server: it stops while the member dies (the agent keeps answering /readyz at
   * once and publishes when the server is back); the Pod is replaced under the agent (same name,
   * new UID, none of our conditions); another writer removes our ready condition.
   */
  @Test
  void apiServerDownPodReplacedAndConditionRemovedLoseNothing() throws Exception {
    EtcdBinaries.onThePrimaryOnly(version, "the API server's faults");
    EtcdCluster cluster = keep(EtcdCluster.start(version, 3));
    EtcdMember local = cluster.member(0);
    long id = cluster.client().memberId(local.clientUrl());
    FaultRig rig = readyAgent(cluster, local, local.clientUrl(), local.clientUrl());
    RealApiPublication api = (RealApiPublication) rig.publication;

    rig.mark(History.Kind.FAULT_BEGINS, "api down while etcd is killed");
    api.stopApiServer();
    local.kill();
    rig.awaitNotReady("etcd killed, api down");
    // with a condition change waiting to be published and no server to take it, /readyz must
    // still answer from the last poll at once
    List<Long> millis = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      long t = System.nanoTime();
      assertThat(rig.readyz()).as("/readyz while the API server is down").isEqualTo(503);
      millis.add((System.nanoTime() - t) / 1_000_000);
    }
    System.out.println("[fault] /readyz with the API server down, ms: " + millis);
    assertThat(millis)
        .as("/readyz never waits on the API server (its timeout is 2 s)")
        .allMatch(ms -> ms < 500);
    api.startApiServer();
    rig.mark(History.Kind.FAULT_ENDS, "api up");
    rig.awaitCondition("False");
    local.restart();
    rig.awaitReady("etcd restarted");
    rig.awaitCondition("True");

    rig.mark(History.Kind.FAULT_BEGINS, "api: Pod replaced (new UID, our conditions gone)");
    rig.publication.replacePod();
    rig.awaitCondition("True");
    rig.mark(History.Kind.FAULT_ENDS, "api: Pod replaced (new UID, our conditions gone)");

    rig.mark(History.Kind.FAULT_BEGINS, "api: our ready condition removed by someone");
    rig.publication.removeCondition(Recorder.READY_CONDITION);
    rig.awaitCondition("True");
    rig.mark(History.Kind.FAULT_ENDS, "api: our ready condition removed by someone");

    rig.assertInvariants(id, 5000);
  }

  /**
   * On the stand-in, for what the real server does not do on demand: 500, 429 with Retry-After 1,
   * and a 500 after 3 s, while the member dies and comes back.
   */
  @Test
  void apiFailingThrottlingAndSlowLosesNothing() throws Exception {
    EtcdBinaries.onThePrimaryOnly(version, "the API server's faults");
    EtcdCluster cluster = keep(EtcdCluster.start(version, 3));
    EtcdMember local = cluster.member(0);
    long id = cluster.client().memberId(local.clientUrl());
    FaultRig rig = keep(FaultRig.withStandIn());
    rig.startAgent(local.clientUrl(), othersThan(cluster, local).get());
    rig.record(local.clientUrl(), othersThan(cluster, local));
    rig.awaitReady("start");
    rig.awaitCondition("True");
    FakeKubeApi api = rig.standIn();

    rig.mark(History.Kind.FAULT_BEGINS, "api answers 500, 429 (Retry-After 1), slow 3 s");
    api.addFault(new FakeKubeApi.Fault(500, 0, Duration.ZERO));
    api.addFault(new FakeKubeApi.Fault(429, 1, Duration.ZERO));
    api.addFault(new FakeKubeApi.Fault(500, 0, Duration.ofSeconds(3)));
    local.kill();
    rig.awaitNotReady("etcd killed, api failing");
    long t = System.nanoTime();
    assertThat(rig.readyz()).isEqualTo(503);
    assertThat((System.nanoTime() - t) / 1_000_000)
        .as("/readyz answered at once while the API server failed and hung")
        .isLessThan(500);
    rig.awaitCondition("False");
    rig.mark(History.Kind.FAULT_ENDS, "api answers 500, 429 (Retry-After 1), slow 3 s");
    local.restart();
    rig.awaitReady("etcd restarted");
    rig.awaitCondition("True");

    // the slow answer is recorded when it ends
    Poll.until(
        "the three scripted answers given",
        Duration.ofSeconds(15),
        () ->
            api.requests().stream().filter(r -> r.status() == 500 || r.status() == 429).count()
                >= 3);
    rig.assertInvariants(id, 5000);
  }

  /** The ready condition's status after each successful status patch. */
  static List<String> readySequence(Publication publication) {
    List<String> sequence = new ArrayList<>();
    for (var conditions : publication.conditionHistory()) {
      for (var c : conditions) {
        var o = c.getAsJsonObject();
        if (Recorder.READY_CONDITION.equals(o.get("type").getAsString())) {
          sequence.add(o.get("status").getAsString());
        }
      }
    }
    return sequence;
  }

  /**
   * The member list as the first running member of the test cluster that answers gives it (not the
   * leader: a promoted Pod may lead).
   */
  static List<Member> members(EtcdCluster cluster) {
    RuntimeException last = new IllegalStateException("no running member");
    for (EtcdMember m : cluster.members()) {
      if (m.running()) {
        try {
          return cluster.client().members(m.clientUrl(), 2000);
        } catch (RuntimeException e) {
          last = e;
        }
      }
    }
    throw last;
  }

  static int readyz(FaultRig rig) {
    return Http.statusOrMinusOne(rig.agent().port(), "/readyz");
  }

  static AgentLog log(FaultRig rig) {
    return rig.log();
  }
}
