package io.etcdmemberagent.core.membership;

import io.etcdmemberagent.core.MemberInfo;

/** What the scale-down rule says for one round. */
public sealed interface ScaleDownDecision {

  /** Nothing to do; {@code reason} says why (no surplus member, a pause at 0, not this agent's). */
  record Idle(String reason, String message) implements ScaleDownDecision {}

  /** Remove this surplus member now ({@code path}: the metric's reason label). */
  record Remove(MemberInfo member, int ordinal, String path) implements ScaleDownDecision {}

  /** The surplus member to remove next leads the cluster: hand leadership to {@code toId} first. */
  record MoveLeader(MemberInfo leader, long toId) implements ScaleDownDecision {}

  /** Another surplus member leaves first: one at a time, learners first, the leader last. */
  record AwaitTurn(MemberInfo member, MemberInfo first, String message)
      implements ScaleDownDecision {}

  /**
   * The member is surplus, but removing it now is not safe; {@code reason} is the condition reason
   * shown until it is.
   */
  record Blocked(MemberInfo member, String reason, String message) implements ScaleDownDecision {}
}
