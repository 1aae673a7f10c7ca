package io.etcdmemberagent.model;

/**
 * What must hold in every state the model reaches and of every removal the rule makes. A failure
 * throws with the state; the explorer adds the path that led there.
 */
final class Invariants {

  /** Checked after every step. */
  void state(World w) {
    if (w.tolerance() < w.baselineTolerance()) {
      throw new AssertionError(
          "the cluster tolerates "
              + w.tolerance()
              + " failures, fewer than the "
              + w.baselineTolerance()
              + " it would without the agent");
    }
    if (w.leader >= 0 && !(w.voter(w.leader) && w.etcdUp[w.leader])) {
      throw new AssertionError("db-" + w.leader + " leads without running as a voter");
    }
  }

  /** Checked for every removal the rule asks for, before etcd answers. */
  void removal(World w, int x, String who) {
    if (w.wanted(x)) {
      throw new AssertionError(who + " removes db-" + x + ", a member that stays");
    }
    if (w.pod[x] == World.RUNNING) {
      throw new AssertionError(who + " removes db-" + x + ", whose Pod still runs");
    }
    if (w.voter(x) && w.voters() <= 1) {
      throw new AssertionError(who + " removes db-" + x + ", the last voter");
    }
    if (x == w.leader) {
      throw new AssertionError(who + " removes db-" + x + " while it leads");
    }
  }
}
