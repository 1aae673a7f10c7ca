package io.etcdmemberagent.core;

import java.util.Set;

/**
 * What the scale-down rule decides from: the StatefulSet's size, the member list, the leader (0
 * when unknown), the members that answered {@code Status} as started voters with a leader in this
 * round ({@code healthy}), and who asks.
 */
public record ScaleDownFacts(
    ScaleTarget target,
    Membership.Known members,
    long leaderId,
    Set<Long> healthy,
    ScaleDownTrigger trigger) {

  public ScaleDownFacts {
    healthy = Set.copyOf(healthy);
  }
}
