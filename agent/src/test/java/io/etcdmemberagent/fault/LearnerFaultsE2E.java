package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Pod;
import io.etcdmemberagent.testing.Poll;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Membership faults around one agent (the real jar), with the history and invariants of {@link
 * FaultRig}: a learner that is added but never started, a second learner added by someone else, a
 * member removed under the agent, and the agent killed in the middle of a catch-up.
 */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#withNewest")
class LearnerFaultsE2E {

  @Parameter String version;

  private final Resources resources = new Resources();

  private <T extends AutoCloseable> T keep(T resource) {
    return resources.keep(resource);
  }

  @AfterEach
  void cleanUp() throws Exception {
    resources.close();
  }

  private static void hold(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis()); // how long a fault lasts, not a wait for state
  }

  @Test
  void aLearnerNeverStartedIsReportedAndNeverPromotedAndASecondLearnerIsNotOurs() throws Exception {
    EtcdCluster cluster = keep(EtcdCluster.start(version, 3));
    Pod pod = Learners.joinedPod(resources, cluster, 0);
    long ownId = Learners.byPeerUrl(cluster, pod.peerUrl()).orElseThrow().getID();
    FaultRig rig = keep(new FaultRig(true));
    rig.startAgent(pod.clientUrl(), Learners.voters(cluster), "--peer-urls=" + pod.peerUrl());
    rig.record(pod.clientUrl(), Learners.running(cluster));

    rig.mark(History.Kind.FAULT_BEGINS, "a learner added, its etcd never started");
    Poll.until(
        "the agent to report NotStarted",
        Duration.ofSeconds(20),
        () -> Learners.state(rig).contains("\"state\":\"NotStarted\""));
    rig.awaitCondition("False");
    hold(Duration.ofSeconds(4));
    assertThat(Learners.byPeerUrl(cluster, pod.peerUrl()).orElseThrow().getIsLearner())
        .as("a learner that never started stays a learner")
        .isTrue();
    assertThat(FaultInjectionE2E.readyz(rig)).isEqualTo(503);

    String otherPeer = "http://127.0.0.1:" + FreePorts.next();
    String secondWhileOurs;
    try {
      cluster.client().addMember(cluster.leader().orElseThrow().clientUrl(), otherPeer, true);
      secondWhileOurs = "accepted";
    } catch (RuntimeException e) {
      secondWhileOurs = "refused: " + e.getMessage();
    }

    pod.startEtcd();
    rig.mark(History.Kind.FAULT_ENDS, "the learner's etcd started");
    Poll.until(
        "our learner promoted",
        Duration.ofSeconds(30),
        () -> !Learners.byPeerUrl(cluster, pod.peerUrl()).orElseThrow().getIsLearner());
    rig.awaitReady("promoted");
    if (Learners.byPeerUrl(cluster, otherPeer).isEmpty()) {
      Poll.until(
          "etcd to accept a second learner",
          Duration.ofSeconds(30),
          () -> {
            cluster.client().addMember(cluster.leader().orElseThrow().clientUrl(), otherPeer, true);
            return true;
          });
    }
    rig.awaitCondition("True");
    rig.mark(History.Kind.STEADY_BEGINS, "another member's learner exists, not started");
    hold(Duration.ofSeconds(4));
    rig.mark(History.Kind.STEADY_ENDS, "another member's learner exists, not started");
    assertThat(Learners.byPeerUrl(cluster, otherPeer).orElseThrow().getIsLearner())
        .as("the other learner (second learner while ours: " + secondWhileOurs + ") untouched")
        .isTrue();

    rig.awaitCondition("True");
    rig.assertInvariants(ownId, 5000);
    assertThat(rig.log().lines()).anyMatch(l -> l.contains("\"event\":\"promoted\""));
  }

  @Test
  void aMemberRemovedUnderTheAgentIsNeverReadyAgainAndTheAgentLives() throws Exception {
    EtcdCluster cluster = keep(EtcdCluster.start(version, 3));
    EtcdMember leader = cluster.leader().orElseThrow();
    EtcdMember local =
        cluster.members().stream().filter(m -> m != leader).findFirst().orElseThrow();
    long id = cluster.client().memberId(local.clientUrl());
    FaultRig rig = keep(new FaultRig(true));
    List<String> others =
        cluster.members().stream().filter(m -> m != local).map(EtcdMember::clientUrl).toList();
    rig.startAgent(local.clientUrl(), others);
    rig.record(local.clientUrl(), () -> others);
    rig.awaitReady("start");
    rig.awaitCondition("True");

    rig.mark(History.Kind.FAULT_BEGINS, "the local member removed from the cluster");
    // etcd refuses membership changes ("unhealthy cluster") until every member has been
    // connected for a few seconds
    Poll.until(
        "etcd to accept removing the member",
        Duration.ofSeconds(30),
        () -> {
          cluster.client().removeMember(leader.clientUrl(), id);
          return true;
        });
    rig.awaitNotReady("removed");
    rig.awaitCondition("False");
    hold(Duration.ofSeconds(4));

    assertThat(Http.statusOrMinusOne(rig.agent().port(), "/livez")).isEqualTo(200);
    assertThat(FaultInjectionE2E.members(cluster))
        .as("the agent never re-adds or touches membership")
        .hasSize(2)
        .noneMatch(m -> m.getID() == id);
    assertThat(Learners.state(rig)).contains("NotAMember");
    rig.assertInvariants(id, 5000);
  }

  @ParameterizedTest(name = "SIG{0}")
  @ValueSource(strings = {"KILL", "TERM"})
  void theAgentStoppedDuringCatchUpRebuildsItsStateFromEtcd(String signal) throws Exception {
    EtcdBinaries.onThePrimaryOnly(version, "the agent's own signals");
    EtcdCluster cluster = keep(EtcdCluster.start(version, 3));
    Pod pod = Learners.joinedPod(resources, cluster, 8);
    long ownId = Learners.byPeerUrl(cluster, pod.peerUrl()).orElseThrow().getID();
    FaultRig rig = keep(new FaultRig(true));
    // ten stable polls (2 s at the learner's 200 ms) leave time to kill the agent mid-way
    String[] flags = {"--peer-urls=" + pod.peerUrl(), "--promote-stable-polls=10"};
    rig.startAgent(pod.clientUrl(), Learners.voters(cluster), flags);
    rig.record(pod.clientUrl(), Learners.running(cluster));
    pod.startEtcd();
    Poll.until(
        "the agent to see its learner",
        Duration.ofSeconds(30),
        () -> Learners.state(rig).contains("\"state\":\"Learner\""));
    assertThat(Learners.byPeerUrl(cluster, pod.peerUrl()).orElseThrow().getIsLearner())
        .as("still a learner when the agent is killed")
        .isTrue();

    rig.mark(History.Kind.FAULT_BEGINS, "agent stopped (SIG" + signal + ") during catch-up");
    int exit = rig.stopAgent(signal);
    assertThat(exit)
        .as("exit status after SIG" + signal)
        .isEqualTo(signal.equals("TERM") ? 0 : 137);
    rig.startAgent(pod.clientUrl(), Learners.voters(cluster), flags);
    rig.mark(History.Kind.FAULT_ENDS, "agent restarted");
    Poll.until(
        "our learner promoted by the restarted agent",
        Duration.ofSeconds(60),
        () -> !Learners.byPeerUrl(cluster, pod.peerUrl()).orElseThrow().getIsLearner());
    rig.awaitReady("promoted");
    rig.awaitCondition("True");

    rig.assertInvariants(ownId, 5000);
    assertThat(rig.log().lines())
        .as("exactly one promote, by the restarted agent")
        .filteredOn(l -> l.contains("\"event\":\"promoted\""))
        .hasSize(1);
  }
}
