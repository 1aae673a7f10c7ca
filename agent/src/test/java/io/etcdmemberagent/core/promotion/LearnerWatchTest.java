package io.etcdmemberagent.core.promotion;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.List;
import org.junit.jupiter.api.Test;

class LearnerWatchTest {

  static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");
  static final MemberEvaluator EVALUATOR = new MemberEvaluator(new ReadinessPolicy(100));

  static MemberSnapshot member(boolean learner, long applied, long leaderIndex) {
    LocalStatus s = new LocalStatus(1, 2, applied, applied, 3, 1, 1, learner, "3.5.30", List.of());
    Membership m =
        new Membership.Known(
            List.of(
                new MemberInfo(1, "a", List.of("p1"), List.of("c1"), learner),
                new MemberInfo(2, "b", List.of("p2"), List.of("c2"), false)),
            "c2");
    return new MemberSnapshot(
        T0,
        new LocalObservation.Answered(s),
        m,
        new LeaderObservation.Answered(2, leaderIndex),
        List.of(),
        0);
  }

  static LearnerProgress observe(LearnerWatch w, MemberSnapshot s, Instant now) {
    return w.observe(s, EVALUATOR.evaluate(s), now);
  }

  @Test
  void aLearnerWhoseAppliedIndexDoesNotMoveWhileBehindStalls() {
    LearnerWatch w = new LearnerWatch(Duration.ofMinutes(1));
    assertThat(observe(w, member(true, 100, 5000), T0).stalled()).isFalse();
    assertThat(observe(w, member(true, 100, 5000), T0.plusSeconds(60)).stalled()).isFalse();
    LearnerProgress later = observe(w, member(true, 100, 5000), T0.plusSeconds(61));
    assertThat(later.stalled()).isTrue();
    assertThat(later.catchUpRatio()).hasValue(0.02);
    assertThat(observe(w, member(true, 101, 5000), T0.plusSeconds(62)).stalled()).isFalse();
  }

  @Test
  void aQuietInSyncLearnerIsNotStalled() {
    LearnerWatch w = new LearnerWatch(Duration.ofMinutes(1));
    observe(w, member(true, 5000, 5000), T0);
    assertThat(observe(w, member(true, 5000, 5000), T0.plusSeconds(600)).stalled()).isFalse();
  }

  @Test
  void measuresJoinToVoter() {
    LearnerWatch w = new LearnerWatch(Duration.ofMinutes(1));
    observe(w, member(true, 10, 5000), T0);
    LearnerProgress voter = observe(w, member(false, 5000, 5000), T0.plusSeconds(42));
    assertThat(voter.watching()).isFalse();
    assertThat(voter.joinToVoter()).hasValue(Duration.ofSeconds(42));
  }
}
