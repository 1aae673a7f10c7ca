package io.etcdmemberagent.app;

import io.etcdmemberagent.core.AgentMetrics;
import io.etcdmemberagent.core.MemberEvaluator;
import io.etcdmemberagent.core.MemberSnapshot;
import io.etcdmemberagent.core.PollOutcome;
import io.etcdmemberagent.core.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Polls on one thread: collect a snapshot, decide, publish. A poll starts {@code interval} after
 * the previous one started (at once if it took longer). No failure stops the loop.
 */
final class PollLoop implements AutoCloseable {

  private final SnapshotCollector collector;
  private final MemberEvaluator evaluator;
  private final AgentMetrics metrics;
  private final TransitionLog transitions;
  private final Clock clock;
  private final Duration interval;
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "poll");
            t.setDaemon(true);
            return t;
          });
  private final AtomicReference<PollOutcome> latest = new AtomicReference<>();
  private volatile Instant lastProgress;
  private long sequence;

  PollLoop(
      SnapshotCollector collector,
      MemberEvaluator evaluator,
      AgentMetrics metrics,
      TransitionLog transitions,
      Clock clock,
      Duration interval) {
    this.collector = collector;
    this.evaluator = evaluator;
    this.metrics = metrics;
    this.transitions = transitions;
    this.clock = clock;
    this.interval = interval;
    this.lastProgress = clock.instant();
  }

  void start() {
    thread.execute(this::pollAndReschedule);
  }

  Optional<PollOutcome> latest() {
    return Optional.ofNullable(latest.get());
  }

  /** When the loop last finished a poll (or started, before the first one finished). */
  Instant lastProgress() {
    return lastProgress;
  }

  private void pollAndReschedule() {
    long started = System.nanoTime();
    try {
      pollOnce();
    } catch (RuntimeException | Error e) {
      EventLog.error("poll-failed", "error", e.toString());
    } finally {
      lastProgress = clock.instant();
      long elapsed = System.nanoTime() - started;
      long delay = Math.max(0, interval.toNanos() - elapsed);
      if (!thread.isShutdown()) {
        thread.schedule(this::pollAndReschedule, delay, TimeUnit.NANOSECONDS);
      }
    }
  }

  private void pollOnce() {
    long started = System.nanoTime();
    MemberSnapshot snapshot = collector.collect();
    Verdict verdict = evaluator.evaluate(snapshot);
    PollOutcome outcome =
        new PollOutcome(
            ++sequence, snapshot, verdict, Duration.ofNanos(System.nanoTime() - started));
    latest.set(outcome);
    metrics.recordPoll(outcome);
    transitions.observe(outcome);
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
