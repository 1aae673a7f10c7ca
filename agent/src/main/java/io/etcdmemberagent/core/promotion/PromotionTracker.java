package io.etcdmemberagent.core.promotion;

import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.function.DoubleSupplier;

/**
 * Applies our promotion rule (DESIGN.md §3) poll after poll. Promote only when, on fresh data of
 * this poll: (a) local Status answered and says learner; (b) the member list read through a voter
 * shows this member as a started learner; (c) a leader is known and no alarm is raised; (d) lag ≤
 * max on {@code stablePolls} consecutive polls; (e) the disk check passes when one is configured.
 * etcd's own check is the last gate. Pure: time and jitter come in from outside.
 */
public final class PromotionTracker {

  private static final int HISTORY = 20;

  private final PromotionPolicy policy;
  private final DoubleSupplier jitter;
  private final Deque<PromotionAttempt> history = new ArrayDeque<>();
  private int streak;
  private Instant backoffUntil = Instant.MIN;
  private Duration nextBackoff;
  private boolean removed;

  /** {@code jitter} returns values in [0, 1). */
  public PromotionTracker(PromotionPolicy policy, DoubleSupplier jitter) {
    this.policy = policy;
    this.jitter = jitter;
    this.nextBackoff = policy.initialBackoff();
  }

  public PromotionDecision decide(MemberSnapshot snapshot, Verdict verdict, Instant now) {
    Optional<PromotionDecision> broken = ruleBroken(snapshot, verdict);
    if (broken.isPresent()) {
      streak = 0;
      return broken.get();
    }
    streak++;
    long lag = verdict.lag().getAsLong();
    if (streak < policy.stablePolls()) {
      return new PromotionDecision.Hold(
          "Stabilizing",
          "lag "
              + lag
              + " within "
              + policy.maxLagEntries()
              + " on "
              + streak
              + " of "
              + policy.stablePolls()
              + " polls");
    }
    if (removed) {
      return new PromotionDecision.Hold("Removed", "etcd said member not found; not retried");
    }
    if (now.isBefore(backoffUntil)) {
      return new PromotionDecision.BackingOff(backoffUntil, lastResult());
    }
    if (!policy.enabled()) {
      return new PromotionDecision.ObserveOnly(verdict.memberId(), lag);
    }
    return new PromotionDecision.Promote(verdict.memberId(), lag);
  }

  private Optional<PromotionDecision> ruleBroken(MemberSnapshot snapshot, Verdict verdict) {
    if (!(snapshot.local() instanceof LocalObservation.Answered answered)) {
      return hold("LocalSilent", "the local member did not answer Status in this poll");
    }
    LocalStatus status = answered.status();
    if (!status.learner()) {
      return Optional.of(new PromotionDecision.NotALearner(verdict.state().reason()));
    }
    if (!(snapshot.membership() instanceof Membership.Known known)) {
      return hold("MembershipUnknown", "the member list could not be read through a voter");
    }
    Optional<MemberInfo> entry = known.byId(status.memberId());
    if (entry.isEmpty()) {
      return hold("NotAMember", "this member is not in the member list");
    }
    if (!entry.get().learner()) {
      return hold("ListedAsVoter", "the member list already shows this member as a voter");
    }
    if (!entry.get().started()) {
      return hold("NotStarted", "the member list does not show this learner as started");
    }
    if (!status.hasLeader() || !(snapshot.leader() instanceof LeaderObservation.Answered)) {
      return hold("NoLeader", "no leader known, or the leader did not answer");
    }
    if (!verdict.alarms().isEmpty()) {
      return hold("Alarm", "an alarm is raised: " + verdict.alarms());
    }
    if (verdict.disk().isPresent() && !verdict.disk().get().passed()) {
      return hold("DiskUnhealthy", "the disk check fails: " + verdict.disk().get().reason());
    }
    long lag = verdict.lag().orElse(Long.MAX_VALUE);
    if (lag > policy.maxLagEntries()) {
      return hold("Lagging", "lag " + lag + " > " + policy.maxLagEntries());
    }
    return Optional.empty();
  }

  private static Optional<PromotionDecision> hold(String reason, String message) {
    return Optional.of(new PromotionDecision.Hold(reason, message));
  }

  /** Records an attempt's outcome: success clears the backoff, refusals grow it. */
  public void record(PromotionAttempt attempt) {
    history.addLast(attempt);
    while (history.size() > HISTORY) {
      history.removeFirst();
    }
    if (attempt.result().success()) {
      nextBackoff = policy.initialBackoff();
      backoffUntil = Instant.MIN;
      return;
    }
    if (attempt.result() == PromoteResult.NOT_FOUND) {
      removed = true;
    }
    // Full jitter in [backoff/2, backoff): spreads retries, never waits longer than planned.
    long nanos = nextBackoff.toNanos();
    long wait = nanos / 2 + (long) (jitter.getAsDouble() * (nanos / 2));
    backoffUntil = attempt.at().plus(attempt.took()).plusNanos(wait);
    Duration doubled = nextBackoff.multipliedBy(2);
    nextBackoff = doubled.compareTo(policy.maxBackoff()) > 0 ? policy.maxBackoff() : doubled;
  }

  public List<PromotionAttempt> history() {
    return List.copyOf(history);
  }

  public int streak() {
    return streak;
  }

  private String lastResult() {
    return history.isEmpty() ? "none" : history.getLast().result().label();
  }
}
