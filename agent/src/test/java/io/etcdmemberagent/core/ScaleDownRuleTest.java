package io.etcdmemberagent.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
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
    ScaleDownDecision d =
        ScaleDownRule.decide(
            new ScaleDownFacts(
                new ScaleTarget.Unread("503 from the API server"),
                members(5),
                1,
                allHealthy(members(5)),
                new ScaleDownTrigger.OwnPodTerminating(5)));
    assertThat(d)
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class,
            i -> assertThat(i.reason()).isEqualTo(ScaleDownRule.STATEFUL_SET_UNREAD));
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
  void aSurplusLeaderKeepsLeadingWhileAStayingMemberIsDown() {
    Membership.Known four = members(4);
    assertThat(decide(four, 3, 4, Set.of(2L, 3L, 4L), new ScaleDownTrigger.OwnPodTerminating(4)))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> assertThat(b.reason()).isEqualTo("SurplusStayingMemberNotReady"));
  }

  @Test
  void aStayingMemberDownBlocksAVoterRemovalAndSaysWhy() {
    Membership.Known five = members(5);
    ScaleDownDecision d =
        decide(five, 3, 1, Set.of(1L, 2L, 4L, 5L), new ScaleDownTrigger.OwnPodTerminating(5));
    assertThat(d)
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> {
              assertThat(b.reason()).isEqualTo("SurplusStayingMemberNotReady");
              assertThat(b.message()).contains("db-2");
            });
  }

  @Test
  void aStayingLearnerOrUnstartedMemberBlocksAVoterRemoval() {
    assertThat(fast(members(5, 2), 3, 1, 5))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class, b -> assertThat(b.message()).contains("(learner)"));
    Membership.Known unstarted =
        new Membership.Known(
            List.of(
                member(0, false),
                new MemberInfo(2, "", List.of("http://db-1.db-peer:2380"), List.of(), false),
                member(2, false),
                member(3, false)),
            "c0");
    assertThat(fast(unstarted, 3, 1, 4))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> assertThat(b.message()).contains("(db-1) (not started)"));
  }

  @Test
  void quorumArithmeticCountsTheVotersLeftAfterTheRemoval() {
    // 5 -> 3 with both surplus members down: 3 healthy of the 4 left, quorum 3
    Membership.Known five = members(5);
    Set<Long> stayingOnly = Set.of(1L, 2L, 3L);
    assertThat(decide(five, 3, 1, stayingOnly, new ScaleDownTrigger.CatchUp(1, Set.of())))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Remove.class, r -> assertThat(r.member().id()).isEqualTo(5));
    // 7 -> 3 with the four surplus members down: 3 healthy of the 6 left, quorum 4
    Membership.Known seven = members(7);
    assertThat(decide(seven, 3, 1, stayingOnly, new ScaleDownTrigger.CatchUp(1, Set.of())))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> assertThat(b.reason()).isEqualTo("SurplusQuorumAtRisk"));
    // one surplus member still healthy makes 4 of 6
    assertThat(
            decide(seven, 3, 1, Set.of(1L, 2L, 3L, 4L), new ScaleDownTrigger.CatchUp(1, Set.of())))
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
    assertThat(decide(five, 3, 1, healthy, new ScaleDownTrigger.CatchUp(2, Set.of())))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo("NotTheLeader"));
    assertThat(decide(five, 3, 1, healthy, new ScaleDownTrigger.CatchUp(1, Set.of("db-4"))))
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class,
            i -> assertThat(i.reason()).isEqualTo("SurplusPodPresent"));
    assertThat(decide(five, 3, 1, healthy, new ScaleDownTrigger.CatchUp(1, Set.of("db-3"))))
        .isEqualTo(
            new ScaleDownDecision.Remove(five.members().get(4), 4, ScaleDownRule.CATCH_UP_PATH));
    assertThat(decide(five, 3, 0, healthy, new ScaleDownTrigger.CatchUp(1, Set.of())))
        .isInstanceOf(ScaleDownDecision.Idle.class);
  }

  @Test
  void bothPathsPickTheSameMemberSoTwoRemovalsNeverRun() {
    for (int learner = -1; learner < 5; learner++) {
      Membership.Known five = learner < 0 ? members(5) : members(5, learner);
      for (long leader = 1; leader <= 3; leader++) {
        ScaleDownDecision catchUp =
            decide(
                five, 3, leader, allHealthy(five), new ScaleDownTrigger.CatchUp(leader, Set.of()));
        List<Long> fastRemovals = new ArrayList<>();
        for (long self = 4; self <= 5; self++) {
          if (fast(five, 3, leader, self) instanceof ScaleDownDecision.Remove r) {
            fastRemovals.add(r.member().id());
          }
        }
        assertThat(fastRemovals).as("one at a time").hasSizeLessThanOrEqualTo(1);
        if (catchUp instanceof ScaleDownDecision.Remove r && !fastRemovals.isEmpty()) {
          assertThat(r.member().id()).isEqualTo(fastRemovals.get(0));
        }
      }
    }
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
