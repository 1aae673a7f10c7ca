package io.etcdmemberagent.app.publish;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.poll.AgentMetrics;
import io.etcdmemberagent.core.publish.ConditionEntry;
import io.etcdmemberagent.core.publish.ConditionLedger;
import io.etcdmemberagent.core.publish.PodApi;
import io.etcdmemberagent.core.publish.PodCondition;
import io.etcdmemberagent.core.publish.PodView;
import io.etcdmemberagent.support.EventLog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Publishes the desired Pod conditions and events on a thread of its own, so the poll loop and
 * /readyz never wait on the API server. Coalesces to the latest desired state, writes only on
 * change, at most about one write a second (burst 5), backs off with jitter and honours Retry-After
 * on failures, re-reads the Pod on a conflict (a new UID is a new Pod: start over), and re-reads it
 * every resync interval to restore conditions something else removed.
 */
public final class KubeSync implements AutoCloseable {

  private static final Duration EVENT_DEDUP = Duration.ofMinutes(10);
  private static final int EVENT_QUEUE = 50;

  private final PodApi api;
  private final Clock clock;
  private final Duration resyncInterval;
  private final AgentMetrics metrics;
  private final ConditionLedger ledger = new ConditionLedger();
  private final AtomicReference<List<PodCondition>> desired = new AtomicReference<>();
  private final Deque<PodEvent> events = new ArrayDeque<>();
  private final Map<String, Instant> eventsSent = new HashMap<>();
  private final TokenBucket writes;
  private final WriterLoop writer;
  private final java.util.concurrent.CountDownLatch firstAttempt =
      new java.util.concurrent.CountDownLatch(1);

  private final Refusals refusals = new Refusals();

  private volatile PodView pod;
  private volatile Instant lastSync = Instant.EPOCH;
  private volatile String lastError = "";
  private volatile boolean pending = true;
  private Instant nextResync;
  private final ApiBackoff backoff;

  public KubeSync(PodApi api, Clock clock, Duration resyncInterval, AgentMetrics metrics) {
    this.api = api;
    this.clock = clock;
    this.resyncInterval = resyncInterval;
    this.metrics = metrics;
    this.writes = new TokenBucket(5, Duration.ofSeconds(1));
    this.backoff = new ApiBackoff(clock);
    this.writer =
        new WriterLoop(
            "kube-sync",
            this::step,
            e -> {
              lastError = e.toString();
              EventLog.warn("kube-sync-error", "error", e.toString());
              return backoff.after(Duration.ZERO);
            },
            () -> {
              pending = computePending();
              metrics.recordKubeState(pending, lastSync);
              firstAttempt.countDown();
            });
  }

  public void start(List<PodCondition> initial) {
    desired.set(initial);
    writer.start();
  }

  /**
   * Waits (at most {@code limit}) until the first write was tried, so that {@code Starting} is on
   * the Pod before the first verdict replaces it. The poll loop starts after this.
   */
  public void awaitFirstAttempt(Duration limit) {
    try {
      firstAttempt.await(limit.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The latest desired state replaces any unsent one; events queue up (bounded). */
  public void offer(List<PodCondition> conditions, List<PodEvent> newEvents) {
    desired.set(conditions);
    queue(newEvents);
  }

  /** One more Event on the Pod, from outside the poll (the scale-down rule). */
  public void event(PodEvent event) {
    queue(List.of(event));
  }

  private void queue(List<PodEvent> newEvents) {
    synchronized (events) {
      for (PodEvent e : newEvents) {
        if (events.size() >= EVENT_QUEUE) {
          events.removeFirst();
          metrics.recordEvent("dropped");
        }
        events.addLast(e);
      }
    }
    writer.signal();
  }

  public Map<String, Object> status() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("podUid", pod == null ? null : pod.uid());
    m.put("lastSync", lastSync.equals(Instant.EPOCH) ? null : lastSync.toString());
    m.put("pending", pending);
    m.put("lastError", lastError.isEmpty() ? null : lastError);
    m.put("refused", refusals.snapshot());
    return m;
  }

  /** Computed on the sync thread only: the ledger is not shared with other threads. */
  private boolean computePending() {
    List<PodCondition> d = desired.get();
    return pod == null || (d != null && ledger.plan(d, clock.instant(), false).isPresent());
  }

  /** One round; returns how long to wait before the next (unless woken by a new state). */
  private Duration step() {
    Optional<Duration> holdOff = backoff.holdOff();
    if (holdOff.isPresent()) {
      return holdOff.get();
    }
    Instant now = clock.instant();
    if (pod == null || !now.isBefore(nextResync)) {
      Optional<Duration> failed = readPod();
      if (failed.isPresent()) {
        return failed.get();
      }
    }
    Optional<List<ConditionEntry>> plan = ledger.plan(desired.get(), now, false);
    if (plan.isPresent()) {
      Duration tokenWait = writes.take(System.nanoTime());
      if (!tokenWait.isZero()) {
        return tokenWait;
      }
      long started = System.nanoTime();
      KubeAnswer answer = api.patchConditions(pod.uid(), pod.generation(), plan.get());
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      if (answer instanceof KubeAnswer.Done) {
        ledger.confirm(plan.get());
        refusals.clear("pods/status patch");
        lastSync = clock.instant();
        lastError = "";
        backoff.reset();
        metrics.recordPatch("ok", took);
        EventLog.debug("conditions-patched", "uid", pod.uid());
      } else {
        return onFailure(answer, "patch", took);
      }
    }
    return sendEvents().orElse(untilResync());
  }

  private Optional<Duration> readPod() {
    try {
      PodView read = api.read();
      if (pod != null && !pod.uid().equals(read.uid())) {
        EventLog.info("pod-replaced", "oldUid", pod.uid(), "newUid", read.uid());
      }
      pod = read;
      refusals.clear("pods get");
      ledger.adopt(read.ours());
      nextResync = clock.instant().plus(resyncInterval);
      return Optional.empty();
    } catch (PodApi.PodApiException e) {
      lastError = "read pod: " + e.answer();
      if (e.answer() instanceof KubeAnswer.Rejected) {
        refusals.say("pods get", e.answer());
      } else {
        EventLog.warn("pod-read-failed", "answer", e.answer().toString());
      }
      return Optional.of(backoff.after(ApiBackoff.retryAfter(e.answer())));
    }
  }

  private Duration onFailure(KubeAnswer answer, String call, Duration took) {
    lastError = call + ": " + answer;
    if (answer instanceof KubeAnswer.Conflict) {
      metrics.recordPatch("conflict", took);
      EventLog.info("pod-conflict", "detail", answer.toString());
      nextResync = clock.instant(); // re-read the Pod: a new UID means a new Pod
      return Duration.ZERO;
    }
    if (answer instanceof KubeAnswer.Retry) {
      metrics.recordPatch("retry", took);
      EventLog.warn("patch-failed", "detail", answer.toString());
      return backoff.after(ApiBackoff.retryAfter(answer));
    }
    metrics.recordPatch("rejected", took);
    if (answer instanceof KubeAnswer.Rejected r && r.code() == 404) {
      // The Pod is gone, perhaps being re-created by its StatefulSet: read it again soon.
      EventLog.info("pod-missing", "detail", answer.toString());
      nextResync = clock.instant();
      return backoff.after(Duration.ZERO);
    }
    refusals.say("pods/status patch", answer);
    return backoff.after(ApiBackoff.MAX);
  }

  private Optional<Duration> sendEvents() {
    while (true) {
      PodEvent event;
      synchronized (events) {
        event = events.peekFirst();
      }
      if (event == null) {
        return Optional.empty();
      }
      String key = event.reason() + "|" + event.message();
      Instant sent = eventsSent.get(key);
      Instant now = clock.instant();
      if (sent != null && Duration.between(sent, now).compareTo(EVENT_DEDUP) < 0) {
        removeFirstEvent();
        metrics.recordEvent("dropped");
        continue;
      }
      Duration tokenWait = writes.take(System.nanoTime());
      if (!tokenWait.isZero()) {
        return Optional.of(tokenWait);
      }
      KubeAnswer answer = api.createEvent(pod.uid(), event);
      if (answer instanceof KubeAnswer.Retry) {
        metrics.recordEvent("retry");
        return Optional.of(backoff.after(ApiBackoff.retryAfter(answer)));
      }
      removeFirstEvent();
      if (answer instanceof KubeAnswer.Done) {
        eventsSent.put(key, now);
        metrics.recordEvent("ok");
        refusals.clear("events create");
      } else {
        metrics.recordEvent("rejected");
        refusals.say("events create", answer);
      }
    }
  }

  private void removeFirstEvent() {
    synchronized (events) {
      events.pollFirst();
    }
  }

  private Duration untilResync() {
    return WriterLoop.until(clock, nextResync);
  }

  @Override
  public void close() {
    writer.close();
    api.close();
  }
}
