package io.etcdmemberagent.core;

import java.util.List;

/** Derives the desired Pod conditions from a verdict. */
public final class DesiredConditions {

  private DesiredConditions() {}

  /** The conditions written before the first verdict exists. */
  public static List<PodCondition> starting() {
    String message = "the agent has not finished its first poll";
    return List.of(
        new PodCondition(ConditionNames.READY, false, "Starting", message),
        new PodCondition(ConditionNames.VOTING_MEMBER, false, "Starting", message),
        new PodCondition(ConditionNames.IN_SYNC, false, "Starting", message),
        new PodCondition(ConditionNames.ALARMS_CLEAR, false, "Starting", message));
  }

  public static List<PodCondition> from(Verdict verdict, LearnerProgress progress) {
    return List.of(
        ready(verdict),
        votingMember(verdict, progress),
        fromCheck(ConditionNames.IN_SYNC, verdict, CheckNames.IN_SYNC),
        fromCheck(ConditionNames.ALARMS_CLEAR, verdict, CheckNames.ALARMS));
  }

  private static PodCondition votingMember(Verdict verdict, LearnerProgress progress) {
    if (progress.stalled()) {
      return new PodCondition(
          ConditionNames.VOTING_MEMBER,
          false,
          "LearnerStalled",
          "a learner without progress for " + progress.sinceProgress().toSeconds() + "s");
    }
    return new PodCondition(
        ConditionNames.VOTING_MEMBER,
        verdict.state() == MemberState.VOTER,
        verdict.state().reason(),
        verdict.stateDetail());
  }

  private static PodCondition ready(Verdict verdict) {
    return verdict.checks().stream()
        .filter(c -> !c.passed())
        .findFirst()
        .map(
            c ->
                new PodCondition(
                    ConditionNames.READY, false, c.reason(), c.name() + ": " + c.message()))
        .orElse(new PodCondition(ConditionNames.READY, true, "Ready", "all readiness checks pass"));
  }

  private static PodCondition fromCheck(String condition, Verdict verdict, String checkName) {
    Check check =
        verdict
            .check(checkName)
            .orElseThrow(() -> new IllegalStateException("verdict lacks check " + checkName));
    return new PodCondition(condition, check.passed(), check.reason(), check.message());
  }
}
