package io.etcdmemberagent.core.membership;

import io.etcdmemberagent.core.MemberInfo;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The scale-down rule, one rule for both paths. A member is surplus only when it belongs to the
 * StatefulSet (its name, or before it started its peer URL's host, is {@code <statefulset>-<n>})
 * and its ordinal is outside {@code start .. start+replicas-1}; {@code replicas: 0} is a pause and
 * removes nothing, and without a StatefulSet nothing is surplus.
 *
 * <p>Surplus members leave one at a time once their Pods terminate: learners first, then voters
 * from the highest ordinal down, the leader last and only after leadership moved. A surplus member
 * is removed whenever its removal keeps quorum: a leader is known, it is not the last voter, and
 * the healthy voters left after it make a quorum of the voters left. Nothing else blocks it, not a
 * staying member that is down: a terminating member's etcd stops anyway, and a cluster without it
 * needs fewer members for quorum than one that keeps it stopped, so removing it never lowers the
 * number of failures the cluster tolerates below what it would be without the agent. A staying
 * member is never removed. Pure.
 */
public final class ScaleDownRule {

  /** The metric's reason label of each path. */
  public static final String FAST_PATH = "scale-down";

  public static final String CATCH_UP_PATH = "scale-down-catch-up";

  /** The Idle reason when the StatefulSet could not be read: undecided, not settled. */
  public static final String STATEFUL_SET_UNREAD = "StatefulSetUnread";

  /**
   * The Idle reason when the API server refused the agent itself (401, 403): not settled (the
   * condition is Unknown), but final for the fast path, as at an uninstall.
   */
  public static final String STATEFUL_SET_REFUSED = "StatefulSetRefused";

  /** The Idle reason of the catch-up path while the next surplus member's own agent may act. */
  public static final String SURPLUS_POD_PRESENT = "SurplusPodPresent";

  private ScaleDownRule() {}

  public static ScaleDownDecision decide(ScaleDownFacts facts) {
    if (facts.target() instanceof ScaleTarget.Unread unread) {
      return new ScaleDownDecision.Idle(
          unread.refused() ? STATEFUL_SET_REFUSED : STATEFUL_SET_UNREAD,
          "the StatefulSet was not read: " + unread.reason());
    }
    if (!(facts.target() instanceof ScaleTarget.Replicas target)) {
      return new ScaleDownDecision.Idle(
          "NoStatefulSet", "nothing is surplus: " + ((ScaleTarget.None) facts.target()).reason());
    }
    if (target.replicas() == 0) {
      return new ScaleDownDecision.Idle(
          "Paused", "replicas 0 is a pause: every member and its data stay for the way back");
    }
    List<MemberInfo> surplus = surplusInOrder(facts, target);
    if (surplus.isEmpty()) {
      return new ScaleDownDecision.Idle(
          "NoSurplusMember", "no member outside ordinals " + target.range());
    }
    ScaleDownTrigger trigger = facts.trigger();
    if (trigger instanceof ScaleDownTrigger.OwnPodTerminating own) {
      Optional<MemberInfo> self = facts.members().byId(own.selfId());
      if (self.isEmpty()) {
        return new ScaleDownDecision.Idle("AlreadyRemoved", "this member is no longer in the list");
      }
      if (!surplus.contains(self.get())) {
        return new ScaleDownDecision.Idle(
            "NotSurplus", "this member's ordinal is within " + target.range());
      }
      MemberInfo next = leaving(facts, surplus, own.selfId()).get(0);
      if (next.id() == own.selfId() || facts.pod(podName(next)) == SurplusPod.GONE) {
        return removeSafely(facts, target, next, FAST_PATH);
      }
      return new ScaleDownDecision.AwaitTurn(
          self.get(), next, label(next) + " leaves first (learners first, the leader last)");
    }
    if (facts.leaderId() == 0 || facts.leaderId() != trigger.selfId()) {
      return new ScaleDownDecision.Idle("NotTheLeader", "the leader's agent catches up");
    }
    List<MemberInfo> leaving = leaving(facts, surplus, 0);
    if (leaving.isEmpty()) {
      return new ScaleDownDecision.Idle(
          SURPLUS_POD_PRESENT,
          "the surplus members' Pods still run: each leaves once its Pod terminates");
    }
    MemberInfo next = leaving.get(0);
    if (facts.pod(podName(next)) != SurplusPod.GONE) {
      return new ScaleDownDecision.Idle(
          SURPLUS_POD_PRESENT, label(next) + " is removed by its own agent while its Pod runs");
    }
    return removeSafely(facts, target, next, CATCH_UP_PATH);
  }

  /**
   * The surplus members whose Pods terminate or are gone, in removal order; the asking member
   * ({@code selfId}) counts as leaving whatever an older read of its Pod said.
   */
  private static List<MemberInfo> leaving(
      ScaleDownFacts facts, List<MemberInfo> surplus, long selfId) {
    return surplus.stream()
        .filter(m -> m.id() == selfId || facts.pod(podName(m)) != SurplusPod.RUNNING)
        .toList();
  }

  private static ScaleDownDecision removeSafely(
      ScaleDownFacts facts, ScaleTarget.Replicas target, MemberInfo candidate, String path) {
    int ordinal = ordinal(target.statefulSet(), candidate).orElseThrow();
    if (candidate.learner()) {
      return new ScaleDownDecision.Remove(candidate, ordinal, path);
    }
    List<MemberInfo> voters = facts.members().members().stream().filter(m -> !m.learner()).toList();
    if (voters.size() <= 1) {
      return new ScaleDownDecision.Blocked(
          candidate, "SurplusLastVoter", label(candidate) + " is the last voter: never removed");
    }
    if (facts.leaderId() == 0) {
      return new ScaleDownDecision.Blocked(
          candidate,
          "SurplusNoLeader",
          "no leader is known (the voters may have no quorum): a removal needs one");
    }
    List<MemberInfo> votersAfter = voters.stream().filter(m -> m.id() != candidate.id()).toList();
    long healthyAfter = votersAfter.stream().filter(m -> facts.healthy().contains(m.id())).count();
    int quorumAfter = votersAfter.size() / 2 + 1;
    if (healthyAfter < quorumAfter) {
      return new ScaleDownDecision.Blocked(
          candidate,
          "SurplusQuorumAtRisk",
          "after removing "
              + label(candidate)
              + ", "
              + healthyAfter
              + " of "
              + votersAfter.size()
              + " voters would be healthy, below the quorum of "
              + quorumAfter);
    }
    if (candidate.id() == facts.leaderId()) {
      return votersAfter.stream()
          .filter(m -> facts.healthy().contains(m.id()))
          .min(
              Comparator.<MemberInfo>comparingInt(m -> isSurplus(target, m) ? 1 : 0)
                  .thenComparingInt(m -> ordinal(target.statefulSet(), m).orElse(0)))
          .<ScaleDownDecision>map(to -> new ScaleDownDecision.MoveLeader(candidate, to.id()))
          .orElseThrow(); // healthyAfter >= quorumAfter >= 1
    }
    return new ScaleDownDecision.Remove(candidate, ordinal, path);
  }

  /**
   * Why this Pod's learner must not be promoted now, if it must not: its ordinal is surplus, or the
   * StatefulSet is paused at 0 (every Pod stops). Promoting a member that is leaving makes a voter
   * that has to be removed again, and that stops with its Pod if it cannot be.
   */
  public static Optional<String> promotionRefusal(ScaleTarget target, String podName) {
    if (!(target instanceof ScaleTarget.Replicas r)) {
      return Optional.empty();
    }
    OptionalInt ordinal = ordinal(r.statefulSet(), podName);
    if (ordinal.isEmpty() || r.wants(ordinal.getAsInt())) {
      return Optional.empty();
    }
    return Optional.of(
        "Pod "
            + podName
            + " is leaving (StatefulSet "
            + r.statefulSet()
            + " wants ordinals "
            + r.range()
            + "): a member that leaves is not promoted");
  }

  /** Surplus members in removal order: learners, then voters by ordinal down, the leader last. */
  static List<MemberInfo> surplusInOrder(ScaleDownFacts facts, ScaleTarget.Replicas target) {
    Comparator<MemberInfo> order =
        Comparator.<MemberInfo>comparingInt(m -> m.learner() ? 0 : 1)
            .thenComparingInt(m -> m.id() == facts.leaderId() ? 1 : 0)
            .thenComparing(
                Comparator.<MemberInfo>comparingInt(m -> ordinal(target.statefulSet(), m).orElse(0))
                    .reversed());
    return facts.members().members().stream()
        .filter(m -> isSurplus(target, m))
        .sorted(order)
        .toList();
  }

  /** Whether the member belongs to the StatefulSet with an ordinal it no longer wants. */
  public static boolean isSurplus(ScaleTarget.Replicas target, MemberInfo m) {
    OptionalInt ordinal = ordinal(target.statefulSet(), m);
    return ordinal.isPresent() && !target.wants(ordinal.getAsInt());
  }

  /** The ordinal of the member's Pod in this StatefulSet, when it is one of its Pods. */
  public static OptionalInt ordinal(String statefulSet, MemberInfo m) {
    return ordinal(statefulSet, podName(m));
  }

  /** The ordinal of a Pod name in this StatefulSet, when it is one of its Pods. */
  public static OptionalInt ordinal(String statefulSet, String pod) {
    String prefix = statefulSet + "-";
    if (!pod.startsWith(prefix)) {
      return OptionalInt.empty();
    }
    String digits = pod.substring(prefix.length());
    if (digits.isEmpty()
        || digits.length() > 9
        || !digits.chars().allMatch(c -> c >= '0' && c <= '9')
        || (digits.length() > 1 && digits.charAt(0) == '0')) {
      return OptionalInt.empty();
    }
    return OptionalInt.of(Integer.parseInt(digits));
  }

  /**
   * The member's Pod: its name once started; before, the first label of its first peer URL's host
   * (the StatefulSet's stable DNS name).
   */
  public static String podName(MemberInfo m) {
    if (m.started()) {
      return m.name();
    }
    if (m.peerUrls().isEmpty()) {
      return "";
    }
    String url = m.peerUrls().get(0);
    int start = url.indexOf("://");
    String rest = start < 0 ? url : url.substring(start + 3);
    int end = rest.length();
    for (char c : new char[] {'.', ':', '/'}) {
      int i = rest.indexOf(c);
      if (i >= 0 && i < end) {
        end = i;
      }
    }
    return rest.substring(0, end);
  }

  private static String label(MemberInfo m) {
    return "member " + Long.toHexString(m.id()) + " (" + podName(m) + ")";
  }
}
