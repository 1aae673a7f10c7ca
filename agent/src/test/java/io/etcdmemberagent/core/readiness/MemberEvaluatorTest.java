package io.etcdmemberagent.core.readiness;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.MemberState;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.disk.DbFileState;
import io.etcdmemberagent.core.disk.DiskEvaluatorTest;
import io.etcdmemberagent.core.disk.DiskFacts;
import io.etcdmemberagent.core.promotion.LearnerProgress;
import io.etcdmemberagent.core.publish.ConditionNames;
import io.etcdmemberagent.core.publish.ConditionStatus;
import io.etcdmemberagent.core.publish.DesiredConditions;
import io.etcdmemberagent.core.publish.PodCondition;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Also the fixtures (snapshots, members) of the other rooms' tests. */
public class MemberEvaluatorTest {

  public static final long SELF = 0xa1;
  public static final long LEADER = 0xb2;
  public static final long OTHER = 0xc3;
  public static final String PEER = "http://10.0.0.1:2380";
  public static final Instant NOW = Instant.parse("2026-12-02T10:00:00Z");
  public static final MemberEvaluator EVALUATOR = new MemberEvaluator(new ReadinessPolicy(100));

  public static LocalStatus status(boolean learner, long leader, long applied, String... errors) {
    return new LocalStatus(
        SELF, leader, applied, applied, 3, 4096, 2048, learner, "3.5.30", List.of(errors));
  }

  public static MemberInfo self(boolean learner, boolean started) {
    return new MemberInfo(
        SELF,
        started ? "self" : "",
        List.of(PEER),
        started ? List.of("http://10.0.0.1:2379") : List.of(),
        learner);
  }

  public static Membership members(MemberInfo... own) {
    List<MemberInfo> list = new ArrayList<>(List.of(own));
    list.add(
        new MemberInfo(
            LEADER,
            "leader",
            List.of("http://10.0.0.2:2380"),
            List.of("http://10.0.0.2:2379"),
            false));
    list.add(
        new MemberInfo(
            OTHER,
            "other",
            List.of("http://10.0.0.3:2380"),
            List.of("http://10.0.0.3:2379"),
            false));
    return new Membership.Known(list, "http://10.0.0.2:2379");
  }

  public static MemberSnapshot snapshot(
      LocalObservation local, Membership membership, LeaderObservation leader) {
    return new MemberSnapshot(NOW, local, membership, leader, List.of(PEER), 0);
  }

  public static LocalObservation answered(LocalStatus s) {
    return new LocalObservation.Answered(s);
  }

  public static LeaderObservation leaderAt(long index) {
    return new LeaderObservation.Answered(LEADER, index);
  }

  public static final LearnerProgress NOT_WATCHING =
      new LearnerProgress(
          false,
          false,
          java.time.Duration.ZERO,
          java.util.OptionalDouble.empty(),
          java.util.Optional.empty());
  public static final LeaderObservation NO_LEADER = new LeaderObservation.Unavailable("no leader");
  public static final LocalObservation REFUSED = new LocalObservation.Refused("connection refused");
  public static final LocalObservation TIMED_OUT =
      new LocalObservation.TimedOut("no answer within 1000ms");

  /** state, then each check as pass (+reason) or fail (-reason), in CheckNames.ALL order. */
  public static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(
            "voter in sync",
            snapshot(
                answered(status(false, LEADER, 1000)), members(self(false, true)), leaderAt(1050)),
            MemberState.VOTER,
            "+Serving +Member +Voter +LeaderKnown +InSync +NoAlarm"),
        Arguments.of(
            "voter that leads",
            snapshot(
                answered(new LocalStatus(SELF, SELF, 10, 10, 2, 1, 1, false, "3.5.30", List.of())),
                members(self(false, true)),
                new LeaderObservation.Answered(SELF, 10)),
            MemberState.VOTER,
            "+Serving +Member +Voter +LeaderKnown +InSync +NoAlarm"),
        Arguments.of(
            "voter lagging",
            snapshot(
                answered(status(false, LEADER, 1000)), members(self(false, true)), leaderAt(1101)),
            MemberState.VOTER,
            "+Serving +Member +Voter +LeaderKnown -Lagging +NoAlarm"),
        Arguments.of(
            "learner in sync",
            snapshot(
                answered(status(true, LEADER, 1000)), members(self(true, true)), leaderAt(1100)),
            MemberState.LEARNER,
            "+Serving +Member -Learner +LeaderKnown +InSync +NoAlarm"),
        Arguments.of(
            "learner catching up (serving, lagging)",
            snapshot(
                answered(status(true, LEADER, 10)), members(self(true, true)), leaderAt(50_000)),
            MemberState.LEARNER,
            "+Serving +Member -Learner +LeaderKnown -Lagging +NoAlarm"),
        Arguments.of(
            "learner added, process not running",
            snapshot(REFUSED, members(self(true, false)), NO_LEADER),
            MemberState.NOT_STARTED,
            "-NotStarted +Member -NotStarted -Unknown -Unknown -Unknown"),
        Arguments.of(
            "learner receiving its snapshot (port accepts, does not serve)",
            snapshot(TIMED_OUT, members(self(true, false)), NO_LEADER),
            MemberState.NOT_STARTED,
            "-CatchingUp +Member -NotStarted -Unknown -Unknown -Unknown"),
        Arguments.of(
            "started learner, local silent (publish applied by the leader first)",
            snapshot(REFUSED, members(self(true, true)), NO_LEADER),
            MemberState.LEARNER,
            "-Unreachable +Member -Learner -Unknown -Unknown -Unknown"),
        Arguments.of(
            "no leader",
            snapshot(
                answered(status(false, 0, 1000, "etcdserver: no leader")),
                members(self(false, true)),
                NO_LEADER),
            MemberState.VOTER,
            "+Serving +Member +Voter -NoLeader -LeaderUnknown +NoAlarm"),
        Arguments.of(
            "local down, started voter",
            snapshot(REFUSED, members(self(false, true)), NO_LEADER),
            MemberState.UNKNOWN,
            "-Unreachable +Member -Unknown -Unknown -Unknown -Unknown"),
        Arguments.of(
            "local hung, started voter",
            snapshot(TIMED_OUT, members(self(false, true)), NO_LEADER),
            MemberState.UNKNOWN,
            "-Timeout +Member -Unknown -Unknown -Unknown -Unknown"),
        Arguments.of(
            "local answers garbage",
            snapshot(
                new LocalObservation.Failed("UNIMPLEMENTED"),
                members(self(false, true)),
                NO_LEADER),
            MemberState.UNKNOWN,
            "-Error +Member -Unknown -Unknown -Unknown -Unknown"),
        Arguments.of(
            "removed from the cluster",
            snapshot(answered(status(false, LEADER, 1000)), members(), leaderAt(1000)),
            MemberState.NOT_A_MEMBER,
            "+Serving -NotAMember -NotAMember +LeaderKnown +InSync +NoAlarm"),
        Arguments.of(
            "member list unreadable",
            snapshot(
                answered(status(false, LEADER, 1000)),
                new Membership.Unknown("timeout"),
                leaderAt(1000)),
            MemberState.VOTER,
            "+Serving -MembershipUnknown +Voter +LeaderKnown +InSync +NoAlarm"),
        Arguments.of(
            "leader did not answer",
            snapshot(
                answered(status(false, LEADER, 1000)),
                members(self(false, true)),
                new LeaderObservation.Unavailable("leader did not answer")),
            MemberState.VOTER,
            "+Serving +Member +Voter +LeaderKnown -LeaderUnknown +NoAlarm"),
        Arguments.of(
            "NOSPACE on this member",
            snapshot(
                answered(status(false, LEADER, 1000, "memberID:161 alarm:NOSPACE ")),
                members(self(false, true)),
                leaderAt(1000)),
            MemberState.VOTER,
            "+Serving +Member +Voter +LeaderKnown +InSync +NoSpace"),
        Arguments.of(
            "CORRUPT on this member",
            snapshot(
                answered(status(false, LEADER, 1000, "memberID:161 alarm:CORRUPT ")),
                members(self(false, true)),
                leaderAt(1000)),
            MemberState.VOTER,
            "+Serving +Member +Voter +LeaderKnown +InSync -Corrupt"),
        Arguments.of(
            "alarm on another member only",
            snapshot(
                answered(status(false, LEADER, 1000, "memberID:195 alarm:NOSPACE ")),
                members(self(false, true)),
                leaderAt(1000)),
            MemberState.VOTER,
            "+Serving +Member +Voter +LeaderKnown +InSync +NoAlarm"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void decidesEveryCheck(String name, MemberSnapshot snapshot, MemberState state, String expected) {
    Verdict verdict = EVALUATOR.evaluate(snapshot);

    assertThat(verdict.state()).isEqualTo(state);
    assertThat(verdict.checks()).extracting(Check::name).containsExactlyElementsOf(CheckNames.ALL);
    String actual =
        verdict.checks().stream()
            .map(c -> (c.passed() ? "+" : "-") + c.reason())
            .collect(Collectors.joining(" "));
    assertThat(actual).isEqualTo(expected);
    assertThat(verdict.ready()).isEqualTo(!expected.contains("-"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void neverReadyUnlessAStartedVoterAnsweredWithALeader(
      String name, MemberSnapshot snapshot, MemberState state, String expected) {
    Verdict verdict = EVALUATOR.evaluate(snapshot);
    if (verdict.ready()) {
      assertThat(snapshot.local()).isInstanceOf(LocalObservation.Answered.class);
      LocalStatus s = ((LocalObservation.Answered) snapshot.local()).status();
      assertThat(s.learner()).isFalse();
      assertThat(s.hasLeader()).isTrue();
      assertThat(verdict.state()).isEqualTo(MemberState.VOTER);
    }
  }

  @org.junit.jupiter.api.Test
  void lagMessageNamesBothNumbers() {
    Verdict verdict =
        EVALUATOR.evaluate(
            snapshot(
                answered(status(false, LEADER, 1000)),
                members(self(false, true)),
                leaderAt(49_210)));
    assertThat(verdict.check(CheckNames.IN_SYNC).orElseThrow().message())
        .isEqualTo("lag 48210 > 100");
    assertThat(verdict.lag()).hasValue(48_210);
  }

  @org.junit.jupiter.api.Test
  void aRememberedIdFindsTheMemberWhileItDoesNotAnswer() {
    MemberSnapshot s =
        new MemberSnapshot(NOW, REFUSED, members(self(false, true)), NO_LEADER, List.of(), SELF);
    Verdict verdict = EVALUATOR.evaluate(s);
    assertThat(verdict.memberId()).isEqualTo(SELF);
    assertThat(verdict.check(CheckNames.MEMBER).orElseThrow().passed()).isTrue();
  }

  @org.junit.jupiter.api.Test
  void aDataDirTheAgentCannotReadGatesNothingAndIsUnknown() {
    MemberEvaluator gating =
        new MemberEvaluator(
            new ReadinessPolicy(100), java.util.Optional.of(DiskEvaluatorTest.EVALUATOR));
    Verdict verdict = gating.evaluate(withDisk(true));
    assertThat(verdict.disk().orElseThrow().reason()).isEqualTo("DataDirUnreadable");
    assertThat(verdict.ready()).as("the member's own etcd may read it well").isTrue();
    PodCondition disk =
        DesiredConditions.from(verdict, NOT_WATCHING).stream()
            .filter(c -> c.name().equals(ConditionNames.DISK_HEALTHY))
            .findFirst()
            .orElseThrow();
    assertThat(disk.status()).isEqualTo(ConditionStatus.UNKNOWN);
    assertThat(gating.evaluate(withDisk(false)).ready())
        .as("a missing data dir still gates")
        .isFalse();
  }

  /** A healthy voter whose data dir exists but is unreadable to the agent, or is missing. */
  private static MemberSnapshot withDisk(boolean exists) {
    DiskFacts facts =
        new DiskFacts(
            exists,
            false,
            false,
            50,
            100,
            500,
            1000,
            new DbFileState.Missing(),
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            true);
    return new MemberSnapshot(
        NOW,
        answered(status(false, LEADER, 1000)),
        members(self(false, true)),
        leaderAt(1000),
        List.of(PEER),
        0,
        java.util.Optional.of(facts));
  }

  @org.junit.jupiter.api.Test
  void conditionsFollowTheChecks() {
    Verdict learner =
        EVALUATOR.evaluate(
            snapshot(
                answered(status(true, LEADER, 1000)), members(self(true, true)), leaderAt(1000)));
    Map<String, PodCondition> byName =
        DesiredConditions.from(learner, NOT_WATCHING).stream()
            .collect(Collectors.toMap(PodCondition::name, c -> c));
    assertThat(byName.get(ConditionNames.READY).status()).isEqualTo(ConditionStatus.FALSE);
    assertThat(byName.get(ConditionNames.READY).reason()).isEqualTo("Learner");
    assertThat(byName.get(ConditionNames.VOTING_MEMBER).reason()).isEqualTo("Learner");
    assertThat(byName.get(ConditionNames.IN_SYNC).status()).isEqualTo(ConditionStatus.TRUE);
    assertThat(byName.get(ConditionNames.ALARMS_CLEAR).status()).isEqualTo(ConditionStatus.TRUE);
    assertThat(byName.get(ConditionNames.PEER_TLS).status()).isEqualTo(ConditionStatus.UNKNOWN);
    assertThat(byName.get(ConditionNames.DISK_HEALTHY).reason()).isEqualTo("NotChecked");
    LearnerProgress stalled =
        new LearnerProgress(
            true,
            true,
            java.time.Duration.ofMinutes(6),
            java.util.OptionalDouble.of(0.5),
            java.util.Optional.empty());
    PodCondition voting = DesiredConditions.from(learner, stalled).get(1);
    assertThat(voting.name()).isEqualTo(ConditionNames.VOTING_MEMBER);
    assertThat(voting.reason()).isEqualTo("LearnerStalled");
    assertThat(voting.status()).isEqualTo(ConditionStatus.FALSE);
    assertThat(DesiredConditions.starting())
        .hasSize(6)
        .allMatch(c -> c.status() == ConditionStatus.FALSE && c.reason().equals("Starting"));
  }
}
