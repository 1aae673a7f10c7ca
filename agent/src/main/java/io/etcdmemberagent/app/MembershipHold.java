package io.etcdmemberagent.app;

import io.etcdmemberagent.app.membership.SurplusRemover;
import io.etcdmemberagent.http.EtcdHold;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * etcd's preStop hold, served from the HTTP port before the rest is wired: until then, and when
 * this agent never changes membership, nothing is held; afterwards the scale-down rule's fast path
 * decides how long etcd keeps serving.
 */
final class MembershipHold implements EtcdHold {

  private final Duration budget;
  private volatile boolean wired;
  private volatile SurplusRemover remover;

  MembershipHold(Duration budget) {
    this.budget = budget;
  }

  /** {@code remover}: null when this agent never removes members. */
  void wired(SurplusRemover remover) {
    this.remover = remover;
    this.wired = true;
  }

  @Override
  public CompletableFuture<String> hold() {
    SurplusRemover r = remover;
    if (r != null) {
      return r.hold(budget);
    }
    return CompletableFuture.completedFuture(
        wired
            ? "this agent removes no members (--remove-surplus-members=false or no Kubernetes):"
                + " nothing held"
            : "the agent is starting: nothing held");
  }

  @Override
  public String progress() {
    SurplusRemover r = remover;
    return r == null ? "nothing held" : r.progress();
  }
}
