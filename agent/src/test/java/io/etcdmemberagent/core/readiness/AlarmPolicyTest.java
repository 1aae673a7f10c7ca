package io.etcdmemberagent.core.readiness;

import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.LEADER;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.NOT_WATCHING;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.NOW;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.PEER;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.REFUSED;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.SELF;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.answered;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.leaderAt;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.members;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.self;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.snapshot;
import static io.etcdmemberagent.core.readiness.MemberEvaluatorTest.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Alarm;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.publish.ConditionNames;
import io.etcdmemberagent.core.publish.ConditionStatus;
import io.etcdmemberagent.core.publish.DesiredConditions;
import io.etcdmemberagent.core.publish.PodCondition;
import io.etcdmemberagent.core.tls.PeerTlsFacts;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** NOSPACE gates readiness only when configured; CORRUPT always; alarms-clear shows both. */
class AlarmPolicyTest {

  static MemberSnapshot withAlarm(String type) {
    return snapshot(
        answered(status(false, LEADER, 1000, "memberID:" + SELF + " alarm:" + type + " ")),
        members(self(false, true)),
        leaderAt(1000));
  }

  static PodCondition alarmsClear(Verdict verdict) {
    return DesiredConditions.from(verdict, NOT_WATCHING).stream()
        .filter(c -> c.name().equals(ConditionNames.ALARMS_CLEAR))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void noSpaceIsReportedButGatesReadinessOnlyWhenConfigured() {
    Verdict lenient =
        new MemberEvaluator(new ReadinessPolicy(100, false)).evaluate(withAlarm("NOSPACE"));
    Verdict strict =
        new MemberEvaluator(new ReadinessPolicy(100, true)).evaluate(withAlarm("NOSPACE"));

    assertThat(lenient.ready()).isTrue();
    assertThat(strict.ready()).isFalse();
    assertThat(strict.check(CheckNames.ALARMS).orElseThrow().reason()).isEqualTo("NoSpace");
    for (Verdict v : List.of(lenient, strict)) {
      PodCondition c = alarmsClear(v);
      assertThat(c.status()).isEqualTo(ConditionStatus.FALSE);
      assertThat(c.reason()).isEqualTo("NoSpace");
    }
  }

  @Test
  void corruptAlwaysFailsReadiness() {
    Verdict v = new MemberEvaluator(new ReadinessPolicy(100, false)).evaluate(withAlarm("CORRUPT"));
    assertThat(v.ready()).isFalse();
    assertThat(alarmsClear(v).reason()).isEqualTo("Corrupt");
  }

  @Test
  void aSilentMemberIsJudgedByTheClusterAlarmList() {
    MemberSnapshot listed =
        new MemberSnapshot(
            NOW,
            REFUSED,
            members(self(false, true)),
            new LeaderObservation.Unavailable("silent"),
            List.of(PEER),
            SELF,
            Optional.empty(),
            new PeerTlsFacts.Unknown("n/a"),
            Optional.of(List.of(new Alarm(SELF, "CORRUPT"), new Alarm(LEADER, "NOSPACE"))));
    Verdict v = new MemberEvaluator(new ReadinessPolicy(100)).evaluate(listed);
    assertThat(v.check(CheckNames.ALARMS).orElseThrow().reason()).isEqualTo("Corrupt");
    assertThat(alarmsClear(v).reason()).isEqualTo("Corrupt");

    MemberSnapshot unlisted =
        new MemberSnapshot(
            NOW, REFUSED, members(self(false, true)), leaderAt(5), List.of(PEER), SELF);
    PodCondition unknown =
        alarmsClear(new MemberEvaluator(new ReadinessPolicy(100)).evaluate(unlisted));
    assertThat(unknown.status()).isEqualTo(ConditionStatus.UNKNOWN);
  }
}
