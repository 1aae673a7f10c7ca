package io.etcdmemberagent.core.join;

import java.time.Duration;
import java.time.Instant;

/**
 * What {@code join} decided for this member, as kept in its EtcdMember: {@code decision} one of
 * {@link #DECISIONS}, the member ID when known (0 otherwise), and how long it waited before.
 */
public record JoinRecord(
    String decision, String message, long memberId, Instant at, Duration waited) {

  public static final java.util.List<String> DECISIONS =
      java.util.List.of(
          "AddedAsLearner",
          "ReusedMember",
          "RestartedFromData",
          "BootstrappedCluster",
          "ReplacedLostMember",
          "WaitingForLearnerSlot",
          "Waiting",
          "GaveUp");

  /** The decision for a finished plan (null for a wait, which {@link #waiting} names). */
  public static String decisionOf(JoinPlan plan) {
    if (plan instanceof JoinPlan.RestartFromData) {
      return "RestartedFromData";
    }
    if (plan instanceof JoinPlan.Reuse) {
      return "ReusedMember";
    }
    if (plan instanceof JoinPlan.AddLearner) {
      return "AddedAsLearner";
    }
    if (plan instanceof JoinPlan.Replace) {
      return "ReplacedLostMember";
    }
    if (plan instanceof JoinPlan.SetAsideRemovedData) {
      return "SetAsideRemovedData";
    }
    if (plan instanceof JoinPlan.Bootstrap) {
      return "BootstrappedCluster";
    }
    if (plan instanceof JoinPlan.Fail) {
      return "GaveUp";
    }
    return waiting(((JoinPlan.Wait) plan).reason());
  }

  /** Waiting for the cluster's learner slot, or for something else. */
  public static String waiting(String reason) {
    return reason.contains("learner slot")
            || reason.contains(JoinDecider.WHY_ONE_PENDING)
            || reason.contains("too many learner")
        ? "WaitingForLearnerSlot"
        : "Waiting";
  }
}
