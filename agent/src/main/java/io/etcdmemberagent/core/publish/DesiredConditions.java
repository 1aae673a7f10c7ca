package io.etcdmemberagent.core.publish;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.MemberState;
import io.etcdmemberagent.core.disk.DiskEvaluator;
import io.etcdmemberagent.core.promotion.LearnerProgress;
import io.etcdmemberagent.core.readiness.Verdict;
import io.etcdmemberagent.core.tls.PeerTlsEvaluator;
import java.util.List;

/** Derives the desired Pod conditions from a verdict. */
public final class DesiredConditions {

  private DesiredConditions() {}

  /** The conditions written before the first verdict exists. */
  public static List<PodCondition> starting() {
    String message = "the agent has not finished its first poll";
    return List.of(
        new PodCondition(ConditionNames.READY, ConditionStatus.FALSE, "Starting", message),
        new PodCondition(ConditionNames.VOTING_MEMBER, ConditionStatus.FALSE, "Starting", message),
        new PodCondition(ConditionNames.IN_SYNC, ConditionStatus.FALSE, "Starting", message),
        new PodCondition(ConditionNames.ALARMS_CLEAR, ConditionStatus.FALSE, "Starting", message),
        new PodCondition(ConditionNames.PEER_TLS, ConditionStatus.FALSE, "Starting", message),
        new PodCondition(ConditionNames.DISK_HEALTHY, ConditionStatus.FALSE, "Starting", message));
  }

  public static List<PodCondition> from(Verdict verdict, LearnerProgress progress) {
    return List.of(
        ready(verdict),
        votingMember(verdict, progress),
        fromCheck(ConditionNames.IN_SYNC, verdict, CheckNames.IN_SYNC),
        alarmsClear(verdict),
        peerTls(verdict.peerTls()),
        verdict
            .disk()
            .map(
                c ->
                    new PodCondition(
                        ConditionNames.DISK_HEALTHY,
                        DiskEvaluator.judged(c)
                            ? ConditionStatus.of(c.passed())
                            : ConditionStatus.UNKNOWN,
                        c.reason(),
                        c.message()))
            .orElse(
                notChecked(ConditionNames.DISK_HEALTHY, "the data dir and disk (no --data-dir)")));
  }

  /**
   * False while any alarm is raised for this member, even one that does not gate readiness (NOSPACE
   * by default); Unknown while neither the member nor the alarm list could be read.
   */
  private static PodCondition alarmsClear(Verdict verdict) {
    Check check = verdict.check(CheckNames.ALARMS).orElseThrow();
    List<String> own = verdict.ownAlarms();
    if (!own.isEmpty()) {
      String reason =
          own.contains("CORRUPT") ? "Corrupt" : own.contains("NOSPACE") ? "NoSpace" : "Alarm";
      return new PodCondition(
          ConditionNames.ALARMS_CLEAR,
          ConditionStatus.FALSE,
          reason,
          "alarm raised for this member: " + String.join(", ", own));
    }
    if (check.reason().equals("Unknown")) {
      return new PodCondition(
          ConditionNames.ALARMS_CLEAR, ConditionStatus.UNKNOWN, "Unknown", check.message());
    }
    return new PodCondition(
        ConditionNames.ALARMS_CLEAR,
        ConditionStatus.TRUE,
        "NoAlarm",
        "no alarm raised for this member");
  }

  private static PodCondition peerTls(Check check) {
    ConditionStatus status =
        check.passed()
            ? ConditionStatus.TRUE
            : PeerTlsEvaluator.UNKNOWN_REASONS.contains(check.reason())
                ? ConditionStatus.UNKNOWN
                : ConditionStatus.FALSE;
    return new PodCondition(ConditionNames.PEER_TLS, status, check.reason(), check.message());
  }

  /** A condition whose check is not configured: Unknown. */
  private static PodCondition notChecked(String name, String what) {
    return new PodCondition(name, ConditionStatus.UNKNOWN, "NotChecked", what + " is not checked");
  }

  private static PodCondition votingMember(Verdict verdict, LearnerProgress progress) {
    if (progress.stalled()) {
      return new PodCondition(
          ConditionNames.VOTING_MEMBER,
          ConditionStatus.FALSE,
          "LearnerStalled",
          "a learner without progress for " + progress.sinceProgress().toSeconds() + "s");
    }
    return new PodCondition(
        ConditionNames.VOTING_MEMBER,
        ConditionStatus.of(verdict.state() == MemberState.VOTER),
        verdict.state().reason(),
        verdict.stateDetail());
  }

  /**
   * Condition messages stay the same while the state does (no numbers that move every poll), so a
   * steady member causes no API writes; the numbers are in /status and the metrics.
   */
  private static PodCondition ready(Verdict verdict) {
    List<String> failing =
        verdict.checks().stream().filter(c -> !c.passed()).map(Check::name).toList();
    if (failing.isEmpty()) {
      return new PodCondition(
          ConditionNames.READY, ConditionStatus.TRUE, "Ready", "all readiness checks pass");
    }
    String reason = verdict.check(failing.get(0)).orElseThrow().reason();
    return new PodCondition(
        ConditionNames.READY,
        ConditionStatus.FALSE,
        reason,
        "failing checks: " + String.join(", ", failing));
  }

  private static PodCondition fromCheck(String condition, Verdict verdict, String checkName) {
    Check check =
        verdict
            .check(checkName)
            .orElseThrow(() -> new IllegalStateException("verdict lacks check " + checkName));
    return new PodCondition(
        condition, ConditionStatus.of(check.passed()), check.reason(), stableMessage(check));
  }

  private static String stableMessage(Check check) {
    return switch (check.reason()) {
      case "InSync" -> "lag to the leader within --max-lag-entries";
      case "Lagging" -> "lag to the leader above --max-lag-entries";
      case "LeaderUnknown" -> "lag unknown: the leader's index could not be read";
      default -> check.message();
    };
  }
}
