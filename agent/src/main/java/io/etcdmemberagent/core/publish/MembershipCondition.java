package io.etcdmemberagent.core.publish;

import io.etcdmemberagent.core.membership.ScaleDownDecision;
import java.util.Set;

/**
 * The {@code membership-settled} condition, from the scale-down rule's last decision on this agent:
 * True when no surplus member remains as far as this agent decides, False while one does (being
 * removed, awaiting its turn, or blocked, with the rule's reason), Unknown where this agent does
 * not decide (it does not lead, the rule is off, no round has run, or the member list was
 * unreadable).
 */
public final class MembershipCondition {

  /** Idle reasons that mean nothing surplus is left for this agent to remove. */
  private static final Set<String> SETTLED =
      Set.of("NoSurplusMember", "NotSurplus", "Paused", "NoStatefulSet", "AlreadyRemoved");

  /** Idle reasons that say a surplus member remains. */
  private static final Set<String> SURPLUS_REMAINS = Set.of("SurplusPodPresent");

  private MembershipCondition() {}

  /** The condition when this agent never removes members ({@code detail} says why). */
  public static PodCondition off(String detail) {
    return new PodCondition(
        ConditionNames.MEMBERSHIP_SETTLED, ConditionStatus.UNKNOWN, "NotChecked", detail);
  }

  public static PodCondition of(ScaleDownDecision decision) {
    if (decision instanceof ScaleDownDecision.Idle idle) {
      ConditionStatus status =
          SETTLED.contains(idle.reason())
              ? ConditionStatus.TRUE
              : SURPLUS_REMAINS.contains(idle.reason())
                  ? ConditionStatus.FALSE
                  : ConditionStatus.UNKNOWN;
      return condition(status, idle.reason(), idle.message());
    }
    if (decision instanceof ScaleDownDecision.Blocked blocked) {
      return condition(ConditionStatus.FALSE, blocked.reason(), blocked.message());
    }
    if (decision instanceof ScaleDownDecision.AwaitTurn wait) {
      return condition(ConditionStatus.FALSE, "SurplusAwaitingTurn", wait.message());
    }
    if (decision instanceof ScaleDownDecision.MoveLeader move) {
      return condition(
          ConditionStatus.FALSE,
          "SurplusLeaderMoving",
          "moving leadership from surplus member "
              + Long.toHexString(move.leader().id())
              + " to "
              + Long.toHexString(move.toId()));
    }
    ScaleDownDecision.Remove remove = (ScaleDownDecision.Remove) decision;
    return condition(
        ConditionStatus.FALSE,
        "SurplusMemberRemoving",
        "removing surplus member "
            + Long.toHexString(remove.member().id())
            + " (ordinal "
            + remove.ordinal()
            + ")");
  }

  private static PodCondition condition(ConditionStatus status, String reason, String message) {
    return new PodCondition(ConditionNames.MEMBERSHIP_SETTLED, status, reason, message);
  }
}
