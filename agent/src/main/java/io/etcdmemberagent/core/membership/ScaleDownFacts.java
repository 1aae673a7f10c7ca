package io.etcdmemberagent.core.membership;

import io.etcdmemberagent.core.Membership;
import java.util.Map;
import java.util.Set;

/**
 * What the scale-down rule decides from: the StatefulSet's size, the member list, the leader (0
 * when unknown), the members that answered {@code Status} as started voters with a leader in this
 * round ({@code healthy}), what is known of the surplus members' Pods by name (a Pod not listed
 * counts as {@link SurplusPod#TERMINATING}: its own agent may act), and who asks.
 */
public record ScaleDownFacts(
    ScaleTarget target,
    Membership.Known members,
    long leaderId,
    Set<Long> healthy,
    Map<String, SurplusPod> pods,
    ScaleDownTrigger trigger) {

  public ScaleDownFacts {
    healthy = Set.copyOf(healthy);
    pods = Map.copyOf(pods);
  }

  /** Every surplus Pod terminating (as when all were deleted at once), or unknown. */
  public ScaleDownFacts(
      ScaleTarget target,
      Membership.Known members,
      long leaderId,
      Set<Long> healthy,
      ScaleDownTrigger trigger) {
    this(target, members, leaderId, healthy, Map.of(), trigger);
  }

  public SurplusPod pod(String name) {
    return pods.getOrDefault(name, SurplusPod.TERMINATING);
  }
}
