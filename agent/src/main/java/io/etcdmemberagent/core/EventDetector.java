package io.etcdmemberagent.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Finds the transitions an operator cares about between two polls and turns them into Pod events:
 * learner seen, promoted or promotion failed, learner stalled, leader lost or regained, alarm
 * raised or cleared, member removed. Pure.
 */
public final class EventDetector {

  private PollOutcome previous;

  public List<PodEvent> observe(PollOutcome outcome) {
    List<PodEvent> events = new ArrayList<>();
    Verdict now = outcome.verdict();
    MemberState before = previous == null ? null : previous.verdict().state();
    String id = Long.toHexString(now.memberId());
    if (now.state() == MemberState.LEARNER && before != MemberState.LEARNER) {
      events.add(
          PodEvent.normal("JoinedAsLearner", "member " + id + " is a learner of the cluster"));
    }
    if (now.state() == MemberState.NOT_A_MEMBER && before != MemberState.NOT_A_MEMBER) {
      events.add(PodEvent.warning("NotAMember", "member " + id + " is not in the member list"));
    }
    List<PromotionAttempt> seen = previous == null ? List.of() : previous.promotions();
    for (PromotionAttempt a : outcome.promotions()) {
      if (seen.contains(a)) {
        continue;
      }
      events.add(
          a.result().success()
              ? PodEvent.normal("Promoted", "member " + id + " promoted to a voting member")
              : PodEvent.warning(
                  "PromotionFailed", "promotion " + a.result().label() + ": " + a.detail()));
    }
    boolean stalled = outcome.progress().stalled();
    if (stalled && (previous == null || !previous.progress().stalled())) {
      events.add(
          PodEvent.warning(
              "LearnerStalled",
              "no progress for " + outcome.progress().sinceProgress().toSeconds() + "s"));
    }
    leader(previous, outcome).ifPresent(events::add);
    disk(previous, outcome).ifPresent(events::add);
    events.addAll(alarms(previous, outcome));
    previous = outcome;
    return events;
  }

  private static java.util.Optional<PodEvent> leader(PollOutcome previous, PollOutcome now) {
    if (previous == null) {
      return java.util.Optional.empty();
    }
    String was = previous.verdict().check(CheckNames.LEADER).map(Check::reason).orElse("");
    String is = now.verdict().check(CheckNames.LEADER).map(Check::reason).orElse("");
    if (was.equals("LeaderKnown") && is.equals("NoLeader")) {
      return java.util.Optional.of(
          PodEvent.warning("LeaderLost", "the local member lost its leader"));
    }
    if (was.equals("NoLeader") && is.equals("LeaderKnown")) {
      return java.util.Optional.of(
          PodEvent.normal("LeaderRegained", "the local member has a leader again"));
    }
    return java.util.Optional.empty();
  }

  private static java.util.Optional<PodEvent> disk(PollOutcome previous, PollOutcome now) {
    java.util.Optional<Check> is = now.verdict().disk();
    if (is.isEmpty()) {
      return java.util.Optional.empty();
    }
    boolean was = previous == null || previous.verdict().disk().map(Check::passed).orElse(true);
    if (was && !is.get().passed()) {
      return java.util.Optional.of(
          PodEvent.warning("DiskUnhealthy", is.get().reason() + ": " + is.get().message()));
    }
    if (!was && is.get().passed()) {
      return java.util.Optional.of(PodEvent.normal("DiskHealthy", "the disk check passes again"));
    }
    return java.util.Optional.empty();
  }

  private static List<PodEvent> alarms(PollOutcome previous, PollOutcome now) {
    List<PodEvent> events = new ArrayList<>();
    if (!(now.snapshot().local() instanceof LocalObservation.Answered)) {
      return events;
    }
    Set<String> is = own(now);
    Set<String> was = previous == null ? Set.of() : own(previous);
    boolean wasKnown =
        previous != null && previous.snapshot().local() instanceof LocalObservation.Answered;
    for (String a : is) {
      if (!was.contains(a)) {
        events.add(PodEvent.warning("AlarmRaised", "etcd alarm " + a + " raised for this member"));
      }
    }
    if (wasKnown) {
      for (String a : was) {
        if (!is.contains(a)) {
          events.add(PodEvent.normal("AlarmCleared", "etcd alarm " + a + " cleared"));
        }
      }
    }
    return events;
  }

  private static Set<String> own(PollOutcome o) {
    Set<String> types = new TreeSet<>();
    for (Alarm a : o.verdict().alarms()) {
      if (a.memberId() == o.verdict().memberId()) {
        types.add(a.type());
      }
    }
    return types;
  }
}
