package io.etcdmemberagent.core.membership;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.publish.ConditionStatus;
import io.etcdmemberagent.core.publish.MembershipCondition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class ScaleDownRuleTest {

  static final String STS = "db";

  /** Member ids are ordinal + 1; a learner when its ordinal is listed. */
  static Membership.Known members(int count, int... learners) {
    List<MemberInfo> list = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      int ordinal = i;
      boolean learner = java.util.Arrays.stream(learners).anyMatch(l -> l == ordinal);
      list.add(member(ordinal, learner));
    }
    return new Membership.Known(list, "c0");
  }

  static MemberInfo member(int ordinal, boolean learner) {
    return new MemberInfo(
        ordinal + 1,
        STS + "-" + ordinal,
        List.of("http://" + STS + "-" + ordinal + ".db-peer.ns.svc:2380"),
        List.of("http://" + STS + "-" + ordinal + ".db-peer.ns.svc:2379"),
        learner);
  }

  static Membership.Known without(Membership.Known m, long... ids) {
    Set<Long> gone = LongStream.of(ids).boxed().collect(Collectors.toSet());
    return new Membership.Known(
        m.members().stream().filter(x -> !gone.contains(x.id())).toList(), "c0");
  }

  static Set<Long> allHealthy(Membership.Known m) {
    return m.members().stream().map(MemberInfo::id).collect(Collectors.toSet());
  }

  static ScaleDownDecision fast(Membership.Known m, int replicas, long leader, long self) {
    return ScaleDownRule.decide(
        new ScaleDownFacts(
            new ScaleTarget.Replicas(STS, replicas),
            m,
            leader,
            allHealthy(m),
            new ScaleDownTrigger.OwnPodTerminating(self)));
  }

  static ScaleDownDecision decide(
      Membership.Known m, int replicas, long leader, Set<Long> healthy, ScaleDownTrigger t) {
    return ScaleDownRule.decide(
        new ScaleDownFacts(new ScaleTarget.Replicas(STS, replicas), m, leader, healthy, t));
  }

  /**
   * The catch-up path of member {@code self}: every surplus member's Pod is gone but those in
   * {@code podsWithAgents}, which are terminating.
   */
  static ScaleDownDecision catchUp(
      Membership.Known m,
      int replicas,
      long leader,
      Set<Long> healthy,
      long self,
      String... podsWithAgents) {
    Map<String, SurplusPod> pods = new HashMap<>();
    for (MemberInfo x : m.members()) {
      pods.put(ScaleDownRule.podName(x), SurplusPod.GONE);
    }
    for (String pod : podsWithAgents) {
      pods.put(pod, SurplusPod.TERMINATING);
    }
    return ScaleDownRule.decide(
        new ScaleDownFacts(
            new ScaleTarget.Replicas(STS, replicas),
            m,
            leader,
            healthy,
            pods,
            new ScaleDownTrigger.CatchUp(self)));
  }

  @Test
  void withoutAStatefulSetNothingIsSurplus() {
    assertThat(
            ScaleDownRule.decide(
                new ScaleDownFacts(
                    new ScaleTarget.None("--kube=off"),
                    members(5),
                    1,
                    allHealthy(members(5)),
                    new ScaleDownTrigger.OwnPodTerminating(5))))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo("NoStatefulSet"));
  }

  @Test
  void anUnreadStatefulSetDecidesNothingAndIsNotSettled() {
    assertUnsettledIdle(
        new ScaleTarget.Unread("503 from the API server"), ScaleDownRule.STATEFUL_SET_UNREAD);
    assertUnsettledIdle(
        new ScaleTarget.Unread("403: its Role is gone", true), ScaleDownRule.STATEFUL_SET_REFUSED);
  }

  private static void assertUnsettledIdle(ScaleTarget target, String reason) {
    ScaleDownDecision d =
        ScaleDownRule.decide(
            new ScaleDownFacts(
                target,
                members(5),
                1,
                allHealthy(members(5)),
                new ScaleDownTrigger.OwnPodTerminating(5)));
    assertThat(d)
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo(reason));
    assertThat(MembershipCondition.of(d).status()).isEqualTo(ConditionStatus.UNKNOWN);
  }

  @Test
  void replicasZeroIsAPauseAndRemovesNothing() {
    for (long self = 1; self <= 3; self++) {
      assertThat(fast(members(3), 0, 1, self))
          .isInstanceOfSatisfying(
              ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo("Paused"));
    }
  }

  @Test
  void aRestartedOrEvictedPodBelowReplicasIsNotSurplus() {
    for (long self = 1; self <= 3; self++) {
      assertThat(fast(members(3), 3, 1, self))
          .isInstanceOfSatisfying(
              ScaleDownDecision.Idle.class,
              i -> assertThat(i.reason()).isEqualTo("NoSurplusMember"));
    }
    assertThat(fast(members(5), 3, 1, 2))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo("NotSurplus"));
  }

  @Test
  void fiveToThreeRemovesTheHighestOrdinalFirstThenTheNext() {
    Membership.Known five = members(5);
    assertThat(fast(five, 3, 1, 5))
        .isEqualTo(new ScaleDownDecision.Remove(five.members().get(4), 4, ScaleDownRule.FAST_PATH));
    assertThat(fast(five, 3, 1, 4))
        .isInstanceOfSatisfying(
            ScaleDownDecision.AwaitTurn.class, a -> assertThat(a.first().id()).isEqualTo(5));
    Membership.Known four = without(five, 5);
    assertThat(fast(four, 3, 1, 4))
        .isEqualTo(new ScaleDownDecision.Remove(five.members().get(3), 3, ScaleDownRule.FAST_PATH));
  }

  @Test
  void learnersLeaveFirstWhateverTheirOrdinal() {
    Membership.Known five = members(5, 3);
    assertThat(fast(five, 3, 1, 5))
        .isInstanceOfSatisfying(
            ScaleDownDecision.AwaitTurn.class, a -> assertThat(a.first().id()).isEqualTo(4));
    assertThat(fast(five, 3, 1, 4)).isInstanceOf(ScaleDownDecision.Remove.class);
  }

  @Test
  void aSurplusLearnerIsRemovedEvenWhileAVoterIsDown() {
    Membership.Known four = members(4, 3);
    Set<Long> healthy = Set.of(1L, 2L);
    assertThat(decide(four, 3, 1, healthy, new ScaleDownTrigger.OwnPodTerminating(4)))
        .isInstanceOf(ScaleDownDecision.Remove.class);
  }

  @Test
  void theLeaderLeavesLastAndOnlyAfterLeadershipMoved() {
    Membership.Known five = members(5);
    long leader = 4; // db-3
    assertThat(fast(five, 3, leader, 4))
        .isInstanceOfSatisfying(
            ScaleDownDecision.AwaitTurn.class, a -> assertThat(a.first().id()).isEqualTo(5));
    assertThat(fast(five, 3, leader, 5)).isInstanceOf(ScaleDownDecision.Remove.class);
    Membership.Known four = without(five, 5);
    assertThat(fast(four, 3, leader, 4))
        .isEqualTo(new ScaleDownDecision.MoveLeader(five.members().get(3), 1));
    assertThat(fast(four, 3, 2, 4)).isInstanceOf(ScaleDownDecision.Remove.class);
  }

  @Test
  void aSurplusLeaderHandsOverEvenWhileAStayingMemberIsDown() {
    // 4 -> 3, db-0 down, db-3 leads: 2 of the 3 voters left are healthy, a quorum
    Membership.Known four = members(4);
    assertThat(decide(four, 3, 4, Set.of(2L, 3L, 4L), new ScaleDownTrigger.OwnPodTerminating(4)))
        .isEqualTo(new ScaleDownDecision.MoveLeader(four.members().get(3), 2));
  }

  @Test
  void aStayingMemberDownNeverBlocksARemovalThatKeepsQuorum() {
    // the example, 4 -> 3 while db-1 is down: removing db-3 leaves 2 of 3 alive; keeping
    // it (its etcd stops with its Pod) would leave 2 of 4, no quorum
    Membership.Known four = members(4);
    assertThat(decide(four, 3, 1, Set.of(1L, 3L, 4L), new ScaleDownTrigger.OwnPodTerminating(4)))
        .isEqualTo(new ScaleDownDecision.Remove(four.members().get(3), 3, ScaleDownRule.FAST_PATH));
    // 5 -> 3 while db-2 is down: 3 of the 4 left are healthy
    Membership.Known five = members(5);
    assertThat(
            decide(five, 3, 1, Set.of(1L, 2L, 4L, 5L), new ScaleDownTrigger.OwnPodTerminating(5)))
        .isInstanceOf(ScaleDownDecision.Remove.class);
  }

  @Test
  void aRemovalThatWouldLoseQuorumIsRefusedAndSaysWhy() {
    // 5 -> 3 while db-1 and db-2 are down: after removing db-4, 2 of 4 healthy, below 3
    Membership.Known five = members(5);
    ScaleDownDecision d =
        decide(five, 3, 1, Set.of(1L, 4L, 5L), new ScaleDownTrigger.OwnPodTerminating(5));
    assertThat(d)
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> {
              assertThat(b.reason()).isEqualTo("SurplusQuorumAtRisk");
              assertThat(b.message())
                  .contains("(db-4)")
                  .contains("2 of 4 voters would be healthy, below the quorum of 3");
            });
    // 2 -> 1 while the staying db-0 is down: no quorum, no leader; nothing is removed
    assertThat(decide(members(2), 1, 0, Set.of(2L), new ScaleDownTrigger.OwnPodTerminating(2)))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> assertThat(b.reason()).isEqualTo("SurplusNoLeader"));
  }

  @Test
  void aStayingLearnerOrUnstartedMemberDoesNotBlockARemovalThatKeepsQuorum() {
    // learners do not vote: 4 voters, 3 healthy after the removal
    assertThat(fast(members(5, 2), 3, 1, 5)).isInstanceOf(ScaleDownDecision.Remove.class);
    Membership.Known unstarted =
        new Membership.Known(
            List.of(
                member(0, false),
                new MemberInfo(2, "", List.of("http://db-1.db-peer:2380"), List.of(), false),
                member(2, false),
                member(3, false)),
            "c0");
    assertThat(
            decide(unstarted, 3, 1, Set.of(1L, 3L, 4L), new ScaleDownTrigger.OwnPodTerminating(4)))
        .isInstanceOf(ScaleDownDecision.Remove.class);
  }

  @Test
  void quorumArithmeticCountsTheVotersLeftAfterTheRemoval() {
    // 5 -> 3 with both surplus members down: 3 healthy of the 4 left, quorum 3
    Membership.Known five = members(5);
    Set<Long> stayingOnly = Set.of(1L, 2L, 3L);
    assertThat(catchUp(five, 3, 1, stayingOnly, 1))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Remove.class, r -> assertThat(r.member().id()).isEqualTo(5));
    // 7 -> 3 with the four surplus members down: 3 healthy of the 6 left, quorum 4
    Membership.Known seven = members(7);
    assertThat(catchUp(seven, 3, 1, stayingOnly, 1))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> assertThat(b.reason()).isEqualTo("SurplusQuorumAtRisk"));
    // one surplus member still healthy makes 4 of 6
    assertThat(catchUp(seven, 3, 1, Set.of(1L, 2L, 3L, 4L), 1))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Remove.class, r -> assertThat(r.member().id()).isEqualTo(7));
  }

  @Test
  void theLastVoterIsNeverRemoved() {
    Membership.Known one = new Membership.Known(List.of(member(1, false)), "c0");
    assertThat(fast(one, 1, 2, 2))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> assertThat(b.reason()).isEqualTo("SurplusLastVoter"));
  }

  @Test
  void aVoterRemovalNeedsAKnownLeader() {
    assertThat(fast(members(4), 3, 0, 4))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> assertThat(b.reason()).isEqualTo("SurplusNoLeader"));
  }

  @Test
  void anAlreadyRemovedMemberIsHarmless() {
    assertThat(fast(without(members(5), 5), 3, 1, 5))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo("AlreadyRemoved"));
  }

  @Test
  void catchUpIsTheLeadersAgentsAloneAndWaitsForAPodThatStillRuns() {
    Membership.Known five = members(5);
    Set<Long> healthy = allHealthy(five);
    assertThat(catchUp(five, 3, 1, healthy, 2))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo("NotTheLeader"));
    assertThat(catchUp(five, 3, 1, healthy, 1, "db-4"))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class,
            i -> assertThat(i.reason()).isEqualTo("SurplusPodPresent"));
    assertThat(catchUp(five, 3, 1, healthy, 1, "db-3"))
        .isEqualTo(
            new ScaleDownDecision.Remove(five.members().get(4), 4, ScaleDownRule.CATCH_UP_PATH));
    assertThat(catchUp(five, 3, 0, healthy, 1)).isInstanceOf(ScaleDownDecision.Idle.class);
  }

  @Test
  void aSurplusPodNotYetTerminatingIsNeverRemovedAndWaitsForNoOne() {
    // OrderedReady: db-4 terminates, db-3 still runs; db-4 leads, so it hands over and leaves
    // without waiting for db-3, whose turn comes when its own Pod terminates
    Membership.Known five = members(5);
    Map<String, SurplusPod> pods = Map.of("db-3", SurplusPod.RUNNING);
    ScaleDownFacts facts =
        new ScaleDownFacts(
            new ScaleTarget.Replicas(STS, 3),
            five,
            5,
            allHealthy(five),
            pods,
            new ScaleDownTrigger.OwnPodTerminating(5));
    assertThat(ScaleDownRule.decide(facts))
        .isEqualTo(new ScaleDownDecision.MoveLeader(five.members().get(4), 1));
    ScaleDownFacts catchUp =
        new ScaleDownFacts(
            new ScaleTarget.Replicas(STS, 3),
            without(five, 5),
            1,
            allHealthy(five),
            pods,
            new ScaleDownTrigger.CatchUp(1));
    assertThat(ScaleDownRule.decide(catchUp))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class,
            i -> assertThat(i.reason()).isEqualTo("SurplusPodPresent"));
  }

  @Test
  void aTerminatingAgentRemovesAMemberAheadOfItWhosePodIsGone() {
    // 5 -> 3: db-4's agent was killed and its Pod is gone; db-3's agent removes db-4 for it
    Membership.Known five = members(5);
    ScaleDownFacts facts =
        new ScaleDownFacts(
            new ScaleTarget.Replicas(STS, 3),
            five,
            1,
            Set.of(1L, 2L, 3L, 4L),
            Map.of("db-4", SurplusPod.GONE),
            new ScaleDownTrigger.OwnPodTerminating(4));
    assertThat(ScaleDownRule.decide(facts))
        .isEqualTo(new ScaleDownDecision.Remove(five.members().get(4), 4, ScaleDownRule.FAST_PATH));
  }

  @Test
  void aLeavingPodsLearnerIsNotPromoted() {
    assertThat(ScaleDownRule.promotionRefusal(new ScaleTarget.Replicas(STS, 3), "db-3"))
        .hasValueSatisfying(r -> assertThat(r).contains("db-3 is leaving").contains("0..2"));
    assertThat(ScaleDownRule.promotionRefusal(new ScaleTarget.Replicas(STS, 0), "db-0"))
        .as("a pause stops every Pod")
        .isPresent();
    assertThat(ScaleDownRule.promotionRefusal(new ScaleTarget.Replicas(STS, 3), "db-2")).isEmpty();
    assertThat(ScaleDownRule.promotionRefusal(new ScaleTarget.Replicas(STS, 2, 3), "db-2"))
        .as("below ordinals.start")
        .isPresent();
    assertThat(ScaleDownRule.promotionRefusal(new ScaleTarget.Unread("503"), "db-9"))
        .as("an unread StatefulSet does not stop a promotion")
        .isEmpty();
    assertThat(ScaleDownRule.promotionRefusal(new ScaleTarget.Replicas(STS, 1), "other-5"))
        .isEmpty();
  }

  @Test
  void ordinalsStartMovesTheWantedRange() {
    // ordinals.start 2, replicas 2: db-2 and db-3 stay; db-0, db-1 (below) and db-4 are surplus
    Membership.Known five = members(5);
    ScaleTarget.Replicas target = new ScaleTarget.Replicas(STS, 2, 2);
    assertThat(target.wants(1)).isFalse();
    assertThat(target.wants(2)).isTrue();
    assertThat(target.wants(3)).isTrue();
    assertThat(target.wants(4)).isFalse();
    assertThat(
            ScaleDownRule.decide(
                new ScaleDownFacts(
                    target, five, 3, allHealthy(five), new ScaleDownTrigger.OwnPodTerminating(3))))
        .as("db-2 stays")
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo("NotSurplus"));
    assertThat(
            ScaleDownRule.decide(
                new ScaleDownFacts(
                    target, five, 3, allHealthy(five), new ScaleDownTrigger.OwnPodTerminating(5))))
        .as("the highest surplus ordinal first")
        .isEqualTo(new ScaleDownDecision.Remove(five.members().get(4), 4, ScaleDownRule.FAST_PATH));
    assertThat(
            ScaleDownRule.decide(
                new ScaleDownFacts(
                    target,
                    without(five, 5),
                    3,
                    allHealthy(five),
                    new ScaleDownTrigger.OwnPodTerminating(2))))
        .as("then below the range, highest first")
        .isEqualTo(new ScaleDownDecision.Remove(five.members().get(1), 1, ScaleDownRule.FAST_PATH));
  }

  @Test
  void membersOutsideTheStatefulSetAreNeverSurplus() {
    Membership.Known mixed =
        new Membership.Known(
            List.of(
                member(0, false),
                new MemberInfo(7, "node-a", List.of("https://10.0.0.7:2380"), List.of(), false),
                new MemberInfo(8, "db-07", List.of("http://db-07.x:2380"), List.of(), false),
                new MemberInfo(9, "dbx-5", List.of("http://dbx-5.x:2380"), List.of(), false)),
            "c0");
    assertThat(fast(mixed, 1, 1, 7))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo("NoSurplusMember"));
  }

  @Test
  void anUnstartedMemberIsKnownByItsPeerUrlsHost() {
    MemberInfo unstarted =
        new MemberInfo(9, "", List.of("https://db-4.db-peer.ns.svc:2380"), List.of(), true);
    assertThat(ScaleDownRule.podName(unstarted)).isEqualTo("db-4");
    assertThat(ScaleDownRule.ordinal(STS, unstarted)).hasValue(4);
    Membership.Known m =
        new Membership.Known(
            List.of(member(0, false), member(1, false), member(2, false), unstarted), "c0");
    assertThat(fast(m, 3, 1, 9))
        .isEqualTo(new ScaleDownDecision.Remove(unstarted, 4, ScaleDownRule.FAST_PATH));
  }

  @Test
  void ordinalsAreDecimalWithoutLeadingZeros() {
    assertThat(ScaleDownRule.ordinal(STS, member(10, false))).hasValue(10);
    for (String name : List.of("db-", "db-x", "db-01", "db-1-2", "other-1", "db-9999999999")) {
      assertThat(ScaleDownRule.ordinal(STS, new MemberInfo(1, name, List.of(), List.of(), false)))
          .as(name)
          .isEmpty();
    }
  }
}
