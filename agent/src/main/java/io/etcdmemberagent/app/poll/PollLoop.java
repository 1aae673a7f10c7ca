package io.etcdmemberagent.app.poll;

import io.etcdmemberagent.app.membership.Promoter;
import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.MemberState;
import io.etcdmemberagent.core.poll.AgentMetrics;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.LearnerProgress;
import io.etcdmemberagent.core.promotion.LearnerWatch;
import io.etcdmemberagent.core.promotion.PromotionAttempt;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.promotion.PromotionTracker;
import io.etcdmemberagent.core.readiness.MemberEvaluator;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.Verdict;
import io.etcdmemberagent.support.EventLog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * Polls on one thread: housekeeping (client certificate reload), collect a snapshot, decide
 * readiness, watch a learner, promote it when the rule holds, publish. A poll starts one interval
 * after the previous one started (at once if it took longer); learners poll at the faster learner
 * interval so that promotion follows catch-up closely. No failure stops the loop.
 */
public final class PollLoop implements AutoCloseable {

  /** The intervals between polls: steady, and while this member is a learner. */
  public record Intervals(Duration steady, Duration learner) {}

  private final SnapshotCollector collector;
  private final MemberEvaluator evaluator;
  private final LearnerWatch learnerWatch;
  private final PromotionTracker promotions;
  private final Promoter promoter;
  private final AgentMetrics metrics;
  private final TransitionLog transitions;
  private final Clock clock;
  private final Intervals intervals;
  private final Runnable beforePoll;
  private final Consumer<PollOutcome> publisher;
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "poll");
            t.setDaemon(true);
            return t;
          });
  private final AtomicReference<PollOutcome> latest = new AtomicReference<>();
  private final AtomicReference<Check> silentInThisPoll = new AtomicReference<>();
  private volatile Instant lastProgress;
  private long sequence;

  public PollLoop(
      SnapshotCollector collector,
      MemberEvaluator evaluator,
      LearnerWatch learnerWatch,
      PromotionTracker promotions,
      Promoter promoter,
      AgentMetrics metrics,
      TransitionLog transitions,
      Clock clock,
      Intervals intervals,
      Runnable beforePoll,
      Consumer<PollOutcome> publisher) {
    this.collector = collector;
    this.evaluator = evaluator;
    this.learnerWatch = learnerWatch;
    this.promotions = promotions;
    this.promoter = promoter;
    this.metrics = metrics;
    this.transitions = transitions;
    this.clock = clock;
    this.intervals = intervals;
    this.beforePoll = beforePoll;
    this.publisher = publisher;
    this.lastProgress = clock.instant();
  }

  public void start() {
    thread.execute(this::pollAndReschedule);
  }

  public Optional<PollOutcome> latest() {
    return Optional.ofNullable(latest.get());
  }

  /**
   * The failing {@code serving} check of the poll in progress once its local call went unanswered,
   * before that poll has finished: empty between polls and while the local member answers.
   */
  public Optional<Check> silentInThisPoll() {
    return Optional.ofNullable(silentInThisPoll.get());
  }

  /** When the loop last finished a poll (or started, before the first one finished). */
  public Instant lastProgress() {
    return lastProgress;
  }

  private void pollAndReschedule() {
    long started = System.nanoTime();
    Duration interval = intervals.steady();
    try {
      interval = intervalAfter(pollOnce());
    } catch (RuntimeException | Error e) {
      EventLog.error("poll-failed", "error", e.toString());
    } finally {
      lastProgress = clock.instant();
      long delay = Math.max(0, interval.toNanos() - (System.nanoTime() - started));
      if (!thread.isShutdown()) {
        thread.schedule(this::pollAndReschedule, delay, TimeUnit.NANOSECONDS);
      }
    }
  }

  private Duration intervalAfter(PollOutcome outcome) {
    MemberState state = outcome.verdict().state();
    boolean learner = state == MemberState.LEARNER || state == MemberState.NOT_STARTED;
    return learner ? intervals.learner() : intervals.steady();
  }

  private PollOutcome pollOnce() {
    long started = System.nanoTime();
    long seq = ++sequence;
    beforePoll.run();
    MemberSnapshot snapshot = collector.collect(this::localSilent);
    Verdict verdict = evaluator.evaluate(snapshot);
    Instant now = clock.instant();
    LearnerProgress progress = learnerWatch.observe(snapshot, verdict, now);
    PromotionDecision decision = promotions.decide(snapshot, verdict, now);
    if (decision instanceof PromotionDecision.Promote promote) {
      PromotionAttempt attempt = promoter.promote(promote, snapshot);
      promotions.record(attempt);
      metrics.recordPromotion(attempt);
      transitions.promotion(attempt, seq);
    }
    PollOutcome outcome =
        new PollOutcome(
            seq,
            snapshot,
            verdict,
            progress,
            decision,
            promotions.history(),
            Duration.ofNanos(System.nanoTime() - started));
    latest.set(outcome);
    silentInThisPoll.set(null);
    metrics.recordPoll(outcome);
    transitions.observe(outcome);
    publisher.accept(outcome);
    return outcome;
  }

  private void localSilent(LocalObservation local) {
    MemberState before = latest().map(o -> o.verdict().state()).orElse(MemberState.UNKNOWN);
    silentInThisPoll.set(MemberEvaluator.serving(local, before));
  }

  @Override
  public void close() {
    thread.shutdownNow();
    try {
      thread.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
