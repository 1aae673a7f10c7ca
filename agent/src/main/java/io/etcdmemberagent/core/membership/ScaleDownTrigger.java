package io.etcdmemberagent.core.membership;

/** Who asks the scale-down rule, and why: the two paths of one rule. */
public sealed interface ScaleDownTrigger {

  /** The asking agent's own member. */
  long selfId();

  /**
   * Fast path: this member's Pod is terminating (SIGTERM, or etcd's preStop hold) while its etcd is
   * held. This agent removes its own member when its turn comes, and a surplus member ahead of it
   * whose Pod is gone (no agent of its own is left to do it).
   */
  record OwnPodTerminating(long selfId) implements ScaleDownTrigger {}

  /**
   * Catch-up path: a remaining member's agent removes surplus members whose Pods are gone. Only the
   * leader's agent acts on this path.
   */
  record CatchUp(long selfId) implements ScaleDownTrigger {}
}
