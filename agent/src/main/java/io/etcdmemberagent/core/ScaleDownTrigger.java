package io.etcdmemberagent.core;

import java.util.Set;

/** Who asks the scale-down rule, and why: the two paths of one rule. */
public sealed interface ScaleDownTrigger {

  /** The asking agent's own member. */
  long selfId();

  /**
   * Fast path: this member's Pod is terminating (SIGTERM or a preStop call). Only this member is
   * ever removed on this path.
   */
  record OwnPodTerminating(long selfId) implements ScaleDownTrigger {}

  /**
   * Catch-up path: a remaining member's agent looks for surplus members that no agent of their own
   * will remove. {@code podsWithAgents}: the StatefulSet's Pods whose agents may still act
   * (present, and not past their deletion deadline). Only the leader's agent acts on this path.
   */
  record CatchUp(long selfId, Set<String> podsWithAgents) implements ScaleDownTrigger {
    public CatchUp {
      podsWithAgents = Set.copyOf(podsWithAgents);
    }
  }
}
