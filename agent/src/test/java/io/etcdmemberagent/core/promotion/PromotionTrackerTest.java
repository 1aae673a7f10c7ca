package io.etcdmemberagent.core.promotion;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.ChangeAnswer;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.readiness.MemberEvaluator;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.ReadinessPolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PromotionTrackerTest {

  static final long SELF = 0xa1;
  static final long LEADER = 0xb2;
  static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");
  static final PromotionPolicy POLICY =
      new PromotionPolicy(
          true, 100, 2, Duration.ofMillis(500), Duration.ofSeconds(4), Duration.ofMinutes(5));
  static final MemberEvaluator EVALUATOR = new MemberEvaluator(new ReadinessPolicy(100));

  static MemberSnapshot learner(
      long applied, long leaderIndex, boolean listedLearner, boolean started, String... errors) {
    LocalStatus status =
        new LocalStatus(SELF, LEADER, applied, applied, 3, 1, 1, true, "3.5.30", List.of(errors));
    Membership members =
        new Membership.Known(
            List.of(
                new MemberInfo(
                    SELF,
                    started ? "self" : "",
                    List.of("p1"),
                    started ? List.of("c1") : List.of(),
                    listedLearner),
                new MemberInfo(LEADER, "leader", List.of("p2"), List.of("c2"), false)),
            "c2");
    return new MemberSnapshot(
        T0,
        new LocalObservation.Answered(status),
        members,
        new LeaderObservation.Answered(LEADER, leaderIndex),
        List.of(),
        0);
  }

  static PromotionDecision decide(PromotionTracker tracker, MemberSnapshot s, Instant now) {
    return tracker.decide(s, EVALUATOR.evaluate(s), now);
  }

  static PromotionTracker tracker(PromotionPolicy policy) {
    return new PromotionTracker(policy, () -> 0.0);
  }

  @Test
  void promotesOnTheSecondConsecutivePollWithinTheLag() {
    PromotionTracker t = tracker(POLICY);
    assertThat(decide(t, learner(10, 5000, true, true), T0))
        .isInstanceOf(PromotionDecision.Hold.class);
    PromotionDecision first = decide(t, learner(4950, 5000, true, true), T0);
    assertThat(first)
        .isEqualTo(new PromotionDecision.Hold("Stabilizing", "lag 50 within 100 on 1 of 2 polls"));
    assertThat(decide(t, learner(4990, 5000, true, true), T0))
        .isEqualTo(new PromotionDecision.Promote(SELF, 10));
  }

  @Test
  void aLagSpikeRestartsTheCount() {
    PromotionTracker t = tracker(POLICY);
    decide(t, learner(4950, 5000, true, true), T0);
    assertThat(decide(t, learner(4000, 5000, true, true), T0))
        .isEqualTo(new PromotionDecision.Hold("Lagging", "lag 1000 > 100"));
    assertThat(decide(t, learner(4990, 5000, true, true), T0))
        .isInstanceOf(PromotionDecision.Hold.class);
    assertThat(t.streak()).isEqualTo(1);
  }

  @Test
  void everyPartOfTheRuleMustHoldOnFreshData() {
    List<PromotionDecision> holds = new ArrayList<>();
    MemberSnapshot ok = learner(5000, 5000, true, true);
    holds.add(
        decide(
            tracker(POLICY),
            new MemberSnapshot(
                T0,
                new LocalObservation.TimedOut("x"),
                ok.membership(),
                ok.leader(),
                List.of(),
                SELF),
            T0));
    holds.add(
        decide(
            tracker(POLICY),
            new MemberSnapshot(
                T0, ok.local(), new Membership.Unknown("x"), ok.leader(), List.of(), 0),
            T0));
    holds.add(decide(tracker(POLICY), learner(5000, 5000, false, true), T0));
    holds.add(decide(tracker(POLICY), learner(5000, 5000, true, false), T0));
    holds.add(
        decide(
            tracker(POLICY),
            new MemberSnapshot(
                T0,
                ok.local(),
                ok.membership(),
                new LeaderObservation.Unavailable("x"),
                List.of(),
                0),
            T0));
    holds.add(
        decide(
            tracker(POLICY), learner(5000, 5000, true, true, "memberID:999 alarm:NOSPACE "), T0));
    assertThat(holds)
        .extracting(d -> ((PromotionDecision.Hold) d).reason())
        .containsExactly(
            "LocalSilent", "MembershipUnknown", "ListedAsVoter", "NotStarted", "NoLeader", "Alarm");
  }

  @Test
  void aVoterIsNotALearner() {
    MemberSnapshot s = learner(5000, 5000, false, true);
    LocalStatus voter =
        new LocalStatus(SELF, LEADER, 5000, 5000, 3, 1, 1, false, "3.5.30", List.of());
    MemberSnapshot v =
        new MemberSnapshot(
            T0, new LocalObservation.Answered(voter), s.membership(), s.leader(), List.of(), 0);
    assertThat(decide(tracker(POLICY), v, T0)).isInstanceOf(PromotionDecision.NotALearner.class);
  }

  @Test
  void observeOnlyNeverPromotes() {
    PromotionTracker t =
        tracker(
            new PromotionPolicy(
                false,
                100,
                1,
                Duration.ofMillis(500),
                Duration.ofSeconds(4),
                Duration.ofMinutes(5)));
    assertThat(decide(t, learner(5000, 5000, true, true), T0))
        .isEqualTo(new PromotionDecision.ObserveOnly(SELF, 0));
  }

  @Test
  void refusalsBackOffExponentiallyUpToTheMaximum() {
    PromotionTracker t = tracker(POLICY);
    MemberSnapshot ok = learner(5000, 5000, true, true);
    decide(t, ok, T0);
    List<Instant> untils = new ArrayList<>();
    Instant now = T0;
    for (int i = 0; i < 6; i++) {
      t.record(
          new PromotionAttempt(now, SELF, 0, PromoteResult.NOT_IN_SYNC, "refused", Duration.ZERO));
      PromotionDecision d = decide(t, ok, now);
      PromotionDecision.BackingOff b = (PromotionDecision.BackingOff) d;
      untils.add(b.until());
      now = b.until();
      assertThat(decide(t, ok, now)).isInstanceOf(PromotionDecision.Promote.class);
    }
    // jitter 0 waits half the backoff: 250ms, 500ms, 1s, 2s, then the 4s maximum halved
    assertThat(untils.get(0)).isEqualTo(T0.plusMillis(250));
    assertThat(Duration.between(untils.get(4), untils.get(5))).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void successClearsTheBackoffAndRemovalStopsForGood() {
    PromotionTracker t = tracker(POLICY);
    MemberSnapshot ok = learner(5000, 5000, true, true);
    decide(t, ok, T0);
    t.record(new PromotionAttempt(T0, SELF, 0, PromoteResult.FAILED, "deadline", Duration.ZERO));
    t.record(
        new PromotionAttempt(T0, SELF, 0, PromoteResult.ALREADY_VOTER, "re-listed", Duration.ZERO));
    assertThat(decide(t, ok, T0)).isInstanceOf(PromotionDecision.Promote.class);
    t.record(
        new PromotionAttempt(
            T0, SELF, 0, PromoteResult.NOT_FOUND, "member not found", Duration.ZERO));
    assertThat(decide(t, ok, T0.plusSeconds(3600)))
        .isEqualTo(
            new PromotionDecision.Hold("Removed", "etcd said member not found; not retried"));
    assertThat(t.history())
        .extracting(PromotionAttempt::result)
        .containsExactly(
            PromoteResult.FAILED, PromoteResult.ALREADY_VOTER, PromoteResult.NOT_FOUND);
  }

  @Test
  void classifiesEtcdsPromoteErrors() {
    assertThat(
            PromoteResult.ofError(
                new ChangeAnswer.Error(
                    "FAILED_PRECONDITION",
                    "etcdserver: can only promote a learner member which is in sync with leader")))
        .isEqualTo(PromoteResult.NOT_IN_SYNC);
    assertThat(
            PromoteResult.ofError(
                new ChangeAnswer.Error("NOT_FOUND", "etcdserver: member not found")))
        .isEqualTo(PromoteResult.NOT_FOUND);
    assertThat(PromoteResult.ofError(new ChangeAnswer.Error("DEADLINE_EXCEEDED", "no answer")))
        .isEqualTo(PromoteResult.FAILED);
  }
}
