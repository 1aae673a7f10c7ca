package io.etcdmemberagent.core.publish;

import io.etcdmemberagent.core.Alarm;
import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.MemberState;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.PromotionAttempt;
import io.etcdmemberagent.core.readiness.Verdict;
import io.etcdmemberagent.core.tls.PeerTlsEvaluator;
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

  private final java.time.Duration downReportAfter;
  private PollOutcome previous;
  private java.time.Instant silentSince;
  private boolean downReported;

  /** {@code downReportAfter}: how long the local member must be silent for LocalMemberDown. */
  public EventDetector(java.time.Duration downReportAfter) {
    this.downReportAfter = downReportAfter;
  }

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
    peerTls(previous, outcome).ifPresent(events::add);
    localOutage(outcome).ifPresent(events::add);
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

  /** A peer-TLS problem (not a "cannot tell") when it appears or changes; and its end. */
  private static java.util.Optional<PodEvent> peerTls(PollOutcome previous, PollOutcome now) {
    Check is = now.verdict().peerTls();
    Check was = previous == null ? null : previous.verdict().peerTls();
    boolean problem = !is.passed() && !PeerTlsEvaluator.UNKNOWN_REASONS.contains(is.reason());
    if (problem && (was == null || !was.reason().equals(is.reason()))) {
      return java.util.Optional.of(
          PodEvent.warning("PeerTlsProblem", is.reason() + ": " + is.message()));
    }
    if (is.passed()
        && was != null
        && !was.passed()
        && !PeerTlsEvaluator.UNKNOWN_REASONS.contains(was.reason())) {
      return java.util.Optional.of(PodEvent.normal("PeerTlsValid", is.message()));
    }
    return java.util.Optional.empty();
  }

  /**
   * The local etcd silent for {@code downReportAfter} (stopped, or failing to start in a loop),
   * once; and its return.
   */
  private java.util.Optional<PodEvent> localOutage(PollOutcome now) {
    boolean answered = now.snapshot().local() instanceof LocalObservation.Answered;
    if (answered) {
      silentSince = null;
      if (downReported) {
        downReported = false;
        return java.util.Optional.of(
            PodEvent.normal("LocalMemberUp", "the local etcd member answers again"));
      }
      return java.util.Optional.empty();
    }
    java.time.Instant at = now.snapshot().takenAt();
    if (silentSince == null) {
      silentSince = at;
    }
    if (!downReported
        && java.time.Duration.between(silentSince, at).compareTo(downReportAfter) >= 0) {
      downReported = true;
      Check serving = now.verdict().check(CheckNames.SERVING).orElseThrow();
      return java.util.Optional.of(
          PodEvent.warning(
              "LocalMemberDown",
              "the local etcd member has not answered for "
                  + downReportAfter.toSeconds()
                  + "s ("
                  + serving.reason()
                  + "): "
                  + serving.message()));
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
