package io.etcdmemberagent.core.publish;

import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.LEADER;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.SELF;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.answered;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.self;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.readiness.MemberEvaluatorTest;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.tls.PeerTlsFacts;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MemberReporterTest {

  static final Instant T0 = Instant.parse("2026-12-04T10:00:00.250Z");

  static PollOutcome outcome(int second, LocalObservation local, MemberInfo own) {
    Instant at = T0.plusSeconds(second);
    MemberSnapshot s =
        new MemberSnapshot(
            at,
            local,
            MemberEvaluatorTest.members(own),
            MemberEvaluatorTest.leaderAt(1000),
            List.of(MemberEvaluatorTest.PEER),
            SELF,
            Optional.empty(),
            new PeerTlsFacts.Unknown("not probed"),
            Optional.empty());
    return new PollOutcome(
        second,
        s,
        EventDetectorTest.EVALUATOR.evaluate(s),
        MemberEvaluatorTest.NOT_WATCHING,
        new PromotionDecision.NotALearner("Voter"),
        List.of(),
        Duration.ofMillis(3));
  }

  static final LocalObservation NOT_SERVING = MemberEvaluatorTest.TIMED_OUT;
  static final LocalObservation LEARNING = answered(status(true, LEADER, 1000));
  static final LocalObservation FOLLOWING = answered(status(false, LEADER, 1000));
  static final LocalObservation LEADING = answered(status(false, SELF, 1000));

  @Test
  void theWholeStoryIsInTheTransitionsWithDep04Reasons() {
    MemberReporter reporter = new MemberReporter("1.2.3", 0);
    List<MemberTransition> all = new ArrayList<>();
    List<MemberRole> roles = new ArrayList<>();
    Object[][] polls = {
      {NOT_SERVING, self(true, false)},
      {NOT_SERVING, self(true, false)},
      {LEARNING, self(true, true)},
      {FOLLOWING, self(false, true)},
      {FOLLOWING, self(false, true)},
      {LEADING, self(false, true)},
      {FOLLOWING, self(false, true)},
      {MemberEvaluatorTest.REFUSED, self(false, true)},
      {FOLLOWING, self(false, true)},
    };
    for (int i = 0; i < polls.length; i++) {
      MemberReporter.Observation o =
          reporter.observe(outcome(i, (LocalObservation) polls[i][0], (MemberInfo) polls[i][1]));
      all.addAll(o.transitions());
      roles.add(o.report().facts().role());
    }
    assertThat(roles)
        .containsExactly(
            MemberRole.NOT_STARTED,
            MemberRole.NOT_STARTED,
            MemberRole.LEARNER,
            MemberRole.FOLLOWER,
            MemberRole.FOLLOWER,
            MemberRole.LEADER,
            MemberRole.FOLLOWER,
            MemberRole.UNKNOWN,
            MemberRole.FOLLOWER);
    assertThat(all.stream().map(MemberTransition::reason))
        .containsExactly(
            "Observed",
            "JoinedAsLearner",
            "PromotedAsVotingMember",
            "GainedClusterLeadership",
            "LostClusterLeadership",
            "MemberUnreachable",
            "MemberReachable");
    assertThat(all.get(0).at())
        .as("seconds, as the API server keeps them")
        .isEqualTo(T0.minusMillis(250));
  }

  @Test
  void anAgentThatFirstSeesALearnerSaysItJoinedAsOne() {
    MemberReporter reporter = new MemberReporter("1.2.3", 0);
    List<MemberTransition> all = new ArrayList<>();
    all.addAll(reporter.observe(outcome(0, LEARNING, self(true, true))).transitions());
    all.addAll(reporter.observe(outcome(1, FOLLOWING, self(false, true))).transitions());
    assertThat(all.stream().map(MemberTransition::reason))
        .containsExactly("JoinedAsLearner", "PromotedAsVotingMember");
  }

  @Test
  void identityIsKeptWhileTheMemberIsSilentButTheMomentIsNot() {
    MemberReporter reporter = new MemberReporter("1.2.3", 8L << 30);
    MemberReport up = reporter.observe(outcome(0, LEADING, self(false, true))).report();
    assertThat(up.facts().leaderId()).isEqualTo(SELF);
    assertThat(up.facts().name()).isEqualTo("self");
    assertThat(up.facts().etcdVersion()).isEqualTo("3.5.30");
    assertThat(up.figures().dbSizeBytes()).isEqualTo(4096);
    assertThat(up.figures().quotaBytes()).as("from the flags before 3.6").isEqualTo(8L << 30);
    assertThat(up.facts().ready()).isTrue();

    MemberReport down =
        reporter.observe(outcome(1, MemberEvaluatorTest.REFUSED, self(false, true))).report();
    assertThat(down.facts().role()).isEqualTo(MemberRole.UNKNOWN);
    assertThat(down.facts().leaderId()).as("not carried over").isZero();
    assertThat(down.facts().ready()).isFalse();
    assertThat(down.facts().name()).isEqualTo("self");
    assertThat(down.facts().etcdVersion()).isEqualTo("3.5.30");
    assertThat(down.facts().started()).isTrue();
    assertThat(down.figures().dbSizeBytes()).isEqualTo(4096);
  }

  @Test
  void aSteadyMemberReportsTheSameFactsEveryPoll() {
    MemberReporter reporter = new MemberReporter("1.2.3", 0);
    MemberReport first = reporter.observe(outcome(0, FOLLOWING, self(false, true))).report();
    MemberReporter.Observation again = reporter.observe(outcome(1, FOLLOWING, self(false, true)));
    assertThat(again.report().facts()).isEqualTo(first.facts());
    assertThat(again.transitions()).isEmpty();
  }

  @Test
  void dbSizeForPeople() {
    assertThat(new MemberFigures(java.util.OptionalLong.empty(), 512, 0, 0).dbSizeText())
        .isEqualTo("512B");
    assertThat(new MemberFigures(java.util.OptionalLong.empty(), 2_621_440, 0, 0).dbSizeText())
        .isEqualTo("2.5MiB");
    assertThat(new MemberFigures(java.util.OptionalLong.empty(), 50, 0, 200).quotaUsedPercent())
        .hasValue(25);
  }
}
