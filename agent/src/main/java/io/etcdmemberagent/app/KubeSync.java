package io.etcdmemberagent.app;

import io.etcdmemberagent.core.AgentMetrics;
import io.etcdmemberagent.core.ConditionEntry;
import io.etcdmemberagent.core.ConditionLedger;
import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.PodApi;
import io.etcdmemberagent.core.PodCondition;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.PodView;
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
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Publishes the desired Pod conditions and events on a thread of its own, so the poll loop and
 * /readyz never wait on the API server. Coalesces to the latest desired state, writes only on
 * change, at most about one write a second (burst 5), backs off with jitter and honours Retry-After
 * on failures, re-reads the Pod on a conflict (a new UID is a new Pod: start over), and re-reads it
 * every resync interval to restore conditions something else removed.
 */
final class KubeSync implements AutoCloseable {

  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
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
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition wake = lock.newCondition();
  private final Thread thread;
  private volatile boolean running = true;
  private final java.util.concurrent.CountDownLatch firstAttempt =
      new java.util.concurrent.CountDownLatch(1);

  /** Set by {@link #offer}, cleared before waiting: no wake-up is lost between two rounds. */
  private boolean dirty;

  /** Refusals that retrying will not fix, by call: said once in the log, kept in the status. */
  private final Map<String, String> refused = new ConcurrentHashMap<>();

  private volatile PodView pod;
  private volatile Instant lastSync = Instant.EPOCH;
  private volatile String lastError = "";
  private volatile boolean pending = true;
  private Instant nextResync;
  private Duration backoff = Duration.ofMillis(500);

  /** After a failure no call is made before this, whatever wakes the thread. */
  private Instant notBefore = Instant.MIN;

  KubeSync(PodApi api, Clock clock, Duration resyncInterval, AgentMetrics metrics) {
    this.api = api;
    this.clock = clock;
    this.resyncInterval = resyncInterval;
    this.metrics = metrics;
    this.writes = new TokenBucket(5, Duration.ofSeconds(1));
    this.thread = new Thread(this::loop, "kube-sync");
    this.thread.setDaemon(true);
  }

  void start(List<PodCondition> initial) {
    desired.set(initial);
    thread.start();
  }

  /**
   * Waits (at most {@code limit}) until the first write was tried, so that {@code Starting} is on
   * the Pod before the first verdict replaces it. The poll loop starts after this.
   */
  void awaitFirstAttempt(Duration limit) {
    try {
      firstAttempt.await(limit.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The latest desired state replaces any unsent one; events queue up (bounded). */
  void offer(List<PodCondition> conditions, List<PodEvent> newEvents) {
    desired.set(conditions);
    lock.lock();
    try {
      for (PodEvent e : newEvents) {
        if (events.size() >= EVENT_QUEUE) {
          events.removeFirst();
          metrics.recordEvent("dropped");
        }
        events.addLast(e);
      }
      dirty = true;
      wake.signalAll();
    } finally {
      lock.unlock();
    }
  }

  Map<String, Object> status() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("podUid", pod == null ? null : pod.uid());
    m.put("lastSync", lastSync.equals(Instant.EPOCH) ? null : lastSync.toString());
    m.put("pending", pending);
    m.put("lastError", lastError.isEmpty() ? null : lastError);
    m.put("refused", new TreeMap<>(refused));
    return m;
  }

  /** Computed on the sync thread only: the ledger is not shared with other threads. */
  private boolean computePending() {
    List<PodCondition> d = desired.get();
    return pod == null || (d != null && ledger.plan(d, clock.instant(), false).isPresent());
  }

  private void loop() {
    while (running) {
      Duration wait;
      try {
        wait = step();
      } catch (RuntimeException e) {
        lastError = e.toString();
        EventLog.warn("kube-sync-error", "error", e.toString());
        wait = nextBackoff(Duration.ZERO);
      }
      pending = computePending();
      metrics.recordKubeState(pending, lastSync);
      firstAttempt.countDown();
      sleep(wait);
    }
  }

  /** One round; returns how long to wait before the next (unless woken by a new state). */
  private Duration step() {
    Instant now = clock.instant();
    if (now.isBefore(notBefore)) {
      return Duration.between(now, notBefore);
    }
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
        refused.remove("pods/status patch");
        lastSync = clock.instant();
        lastError = "";
        backoff = Duration.ofMillis(500);
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
      refused.remove("pods get");
      ledger.adopt(read.ours());
      nextResync = clock.instant().plus(resyncInterval);
      return Optional.empty();
    } catch (PodApi.PodApiException e) {
      lastError = "read pod: " + e.answer();
      if (e.answer() instanceof KubeAnswer.Rejected) {
        sayRefused("pods get", e.answer());
      } else {
        EventLog.warn("pod-read-failed", "answer", e.answer().toString());
      }
      return Optional.of(nextBackoff(retryAfter(e.answer())));
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
      return nextBackoff(retryAfter(answer));
    }
    metrics.recordPatch("rejected", took);
    if (answer instanceof KubeAnswer.Rejected r && r.code() == 404) {
      // The Pod is gone, perhaps being re-created by its StatefulSet: read it again soon.
      EventLog.info("pod-missing", "detail", answer.toString());
      nextResync = clock.instant();
      return nextBackoff(Duration.ZERO);
    }
    sayRefused("pods/status patch", answer);
    return nextBackoff(MAX_BACKOFF);
  }

  private Optional<Duration> sendEvents() {
    while (true) {
      PodEvent event;
      lock.lock();
      try {
        event = events.peekFirst();
      } finally {
        lock.unlock();
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
        return Optional.of(nextBackoff(retryAfter(answer)));
      }
      removeFirstEvent();
      if (answer instanceof KubeAnswer.Done) {
        eventsSent.put(key, now);
        metrics.recordEvent("ok");
        refused.remove("events create");
      } else {
        metrics.recordEvent("rejected");
        sayRefused("events create", answer);
      }
    }
  }

  /**
   * A refusal (403, 404, 422 ...) is logged once per call and kind, naming the call and the API
   * server's own words (e.g. which verb the Role lacks); the rest of the agent carries on.
   */
  private void sayRefused(String call, KubeAnswer answer) {
    String detail = answer instanceof KubeAnswer.Rejected r ? r.message() : answer.toString();
    String previous = refused.put(call, detail);
    if (previous == null || !previous.equals(detail)) {
      EventLog.error("kube-refused", "call", call, "detail", detail);
    }
  }

  private void removeFirstEvent() {
    lock.lock();
    try {
      events.pollFirst();
    } finally {
      lock.unlock();
    }
  }

  private Duration untilResync() {
    Duration d = Duration.between(clock.instant(), nextResync);
    return d.isNegative() ? Duration.ZERO : d;
  }

  private static Duration retryAfter(KubeAnswer answer) {
    return answer instanceof KubeAnswer.Retry r ? r.after() : Duration.ZERO;
  }

  /** Jittered exponential backoff, never shorter than the server's Retry-After. */
  private Duration nextBackoff(Duration retryAfter) {
    long half = backoff.toMillis() / 2;
    Duration jittered = Duration.ofMillis(half + ThreadLocalRandom.current().nextLong(half + 1));
    Duration doubled = backoff.multipliedBy(2);
    backoff = doubled.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : doubled;
    Duration wait = retryAfter.compareTo(jittered) > 0 ? retryAfter : jittered;
    notBefore = clock.instant().plus(wait);
    return wait;
  }

  /** Waits up to {@code d}; a new desired state or event wakes it early. */
  private void sleep(Duration d) {
    lock.lock();
    try {
      if (!running || d.isZero()) {
        return;
      }
      if (!dirty) {
        wake.await(d.toNanos(), TimeUnit.NANOSECONDS);
      }
      dirty = false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    api.close();
  }
}
