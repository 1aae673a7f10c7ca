package io.etcdmemberagent.app.membership;

import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.membership.RemovalAttempt;
import io.etcdmemberagent.core.membership.ScaleDownDecision;
import io.etcdmemberagent.core.membership.ScaleDownRule;
import io.etcdmemberagent.core.membership.StatefulSetApi;
import io.etcdmemberagent.core.membership.SurplusPod;
import io.etcdmemberagent.core.poll.AgentMetrics;
import io.etcdmemberagent.core.publish.MemberRole;
import io.etcdmemberagent.core.publish.MemberTransition;
import io.etcdmemberagent.support.EventLog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Runs the scale-down rule on its two paths. The catch-up path runs on a thread of its own every
 * interval, and only while this member leads (so exactly one agent acts, and only the leader's
 * agent reads the StatefulSet). The fast path runs once, on SIGTERM or on etcd's preStop hold,
 * whichever comes first, while etcd is held: a member that is not surplus settles at once; a
 * surplus member's agent keeps trying until its own member is removed or its budget (inside the
 * Pod's grace period) ends, and only then lets etcd stop. Both paths share one lock, so this agent
 * never has two removals in flight. Each act is counted, logged, and reported as an Event on the
 * Pod and the StatefulSet and as a transition in the EtcdMember.
 */
public final class SurplusRemover implements AutoCloseable {

  /** Between fast-path rounds: the next member's turn is seen within this. */
  private static final Duration RETRY = Duration.ofMillis(500);

  /** How long SIGTERM waits for a settlement past its budget (a last round in flight). */
  private static final Duration SETTLE_SLACK = Duration.ofSeconds(5);

  private static final int HISTORY = 10;

  /** The Idle reason of a round that threw: retried within the fast path's budget. */
  private static final String ROUND_FAILED = "RoundFailed";

  /**
   * Idle reasons that decide nothing (a round that failed, no member list, no StatefulSet read):
   * the fast path asks again within its budget instead of leaving as if this member were not
   * surplus.
   */
  private static final Set<String> UNDECIDED =
      Set.of(ROUND_FAILED, ScaleDownRound.MEMBERS_UNKNOWN, ScaleDownRule.STATEFUL_SET_UNREAD);

  private final ScaleDownRound round;
  private final LongSupplier selfId;
  private final java.util.function.BooleanSupplier leading;
  private final StatefulSetApi statefulSet;
  private final AgentMetrics metrics;
  private final Consumer<PodEvent> podEvents;
  private final Consumer<MemberTransition> transitions;
  private final Runnable decisionChanged;
  private final Clock clock;
  private final Object lock = new Object();
  private final Deque<RemovalAttempt> history = new ArrayDeque<>();
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "scale-down");
            t.setDaemon(true);
            return t;
          });
  private static final ScaleDownDecision NOT_LEADING =
      new ScaleDownDecision.Idle(
          "NotTheLeader",
          "the leader's agent checks for surplus members; this member does not lead");
  private final AtomicBoolean settling = new AtomicBoolean();
  private final CompletableFuture<String> settled = new CompletableFuture<>();
  private final AtomicBoolean removedItself = new AtomicBoolean();
  private volatile ScaleDownDecision last =
      new ScaleDownDecision.Idle("NotChecked", "no round has run yet");
  private volatile Instant lastAt = Instant.EPOCH;
  private String lastLogged = "";
  private String lastFailure = "";

  public SurplusRemover(
      ScaleDownRound round,
      LongSupplier selfId,
      java.util.function.BooleanSupplier leading,
      StatefulSetApi statefulSet,
      AgentMetrics metrics,
      Consumer<PodEvent> podEvents,
      Consumer<MemberTransition> transitions,
      Runnable decisionChanged,
      Clock clock) {
    this.round = round;
    this.selfId = selfId;
    this.leading = leading;
    this.statefulSet = statefulSet;
    this.metrics = metrics;
    this.podEvents = podEvents;
    this.transitions = transitions;
    this.decisionChanged = decisionChanged;
    this.clock = clock;
  }

  /** Starts the catch-up path: a round every {@code interval} while this member leads. */
  public void start(Duration interval) {
    thread.scheduleWithFixedDelay(
        this::catchUp, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void catchUp() {
    try {
      if (selfId.getAsLong() != 0 && leading.getAsBoolean()) {
        synchronized (lock) {
          record(round.run(selfId.getAsLong(), true));
        }
      } else if (!(last instanceof ScaleDownDecision.Idle idle
          && idle.reason().equals("NotTheLeader"))) {
        metrics.recordScaleDown(false, 0); // the leader's agent reports from now on
        last = NOT_LEADING;
        lastAt = clock.instant();
        decisionChanged.run();
      }
    } catch (RuntimeException e) {
      EventLog.warn("scale-down-round-failed", "path", "catch-up", "error", e.toString());
    }
  }

  /**
   * The fast path, on SIGTERM: returns at once when this member is not surplus (a restart, a
   * rollout, an eviction, an uninstall); otherwise retries until it is removed or {@code budget}
   * ends. Joins a settlement a hold already started.
   */
  public void onTermination(Duration budget) {
    try {
      settle(budget).get(budget.toMillis() + SETTLE_SLACK.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      EventLog.warn("scale-down-fast-path-failed", "error", e.toString());
    }
  }

  /**
   * etcd's preStop hold: when this Pod is being deleted (or that cannot be read: never let etcd go
   * on a doubt), starts the fast path as SIGTERM would and completes once this member is settled;
   * otherwise (a container restart, not a deletion) completes at once.
   */
  public CompletableFuture<String> hold(Duration budget) {
    if (settling.get()) {
      return settled;
    }
    if (statefulSet.ownPod() == SurplusPod.RUNNING) {
      return CompletableFuture.completedFuture(
          "this Pod is not being deleted: etcd stops as it would without the agent");
    }
    return settle(budget);
  }

  /**
   * Whether the fast path removed this member: its Pod is being deleted, so etcd's preStop hold
   * (the chart's) is on its way, however late the kubelet sends it.
   */
  public boolean removedItself() {
    return removedItself.get();
  }

  /** What a hold waits for now: the last decision. */
  public String progress() {
    return describe(last);
  }

  /** Starts the fast path once, on a thread of its own; every caller shares its outcome. */
  private CompletableFuture<String> settle(Duration budget) {
    if (settling.compareAndSet(false, true)) {
      Thread t =
          new Thread(
              () -> {
                try {
                  settled.complete(fastPath(budget));
                } catch (RuntimeException e) {
                  settled.complete("the fast path failed: " + e);
                }
              },
              "scale-down-settle");
      t.setDaemon(true);
      t.start();
    }
    return settled;
  }

  private String fastPath(Duration budget) {
    long self = selfId.getAsLong();
    if (self == 0) {
      EventLog.info("scale-down-skipped", "detail", "this member's ID was never learned");
      return "this member's ID was never learned: nothing to settle";
    }
    long deadline = System.nanoTime() + budget.toNanos();
    while (true) {
      ScaleDownRound.Result result;
      try {
        synchronized (lock) {
          result = round.run(self, false);
          record(result);
        }
      } catch (RuntimeException e) {
        // a failed round is retried within the budget; the shutdown must go on whatever happens
        EventLog.warn("scale-down-round-failed", "path", "fast", "error", e.toString());
        result =
            new ScaleDownRound.Result(
                new ScaleDownDecision.Idle(ROUND_FAILED, e.toString()), java.util.Optional.empty());
      }
      ScaleDownDecision d = result.decision();
      boolean done =
          (d instanceof ScaleDownDecision.Idle idle && !UNDECIDED.contains(idle.reason()))
              || (d instanceof ScaleDownDecision.Remove r
                  && r.member().id() == self
                  && result.attempt().map(RemovalAttempt::removedOrGone).orElse(false));
      if (done) {
        removedItself.set(d instanceof ScaleDownDecision.Remove);
        EventLog.info("scale-down-fast-path-done", "decision", describe(d));
        return "settled: " + describe(d);
      }
      if (System.nanoTime() + RETRY.toNanos() > deadline) {
        EventLog.warn(
            "scale-down-fast-path-ended",
            "detail",
            "the termination budget ran out; the catch-up path of a staying member finishes",
            "lastDecision",
            describe(d));
        return "the budget ran out: " + describe(d);
      }
      try {
        Thread.sleep(RETRY.toMillis()); // the retry interval of a bounded loop, not a sync wait
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "interrupted: " + describe(d);
      }
    }
  }

  private void record(ScaleDownRound.Result result) {
    last = result.decision();
    metrics.recordScaleDown(
        result.decision() instanceof ScaleDownDecision.Blocked, result.surplusVoters());
    lastAt = clock.instant();
    String described = describe(result.decision());
    if (!described.equals(lastLogged)) {
      lastLogged = described;
      // published now, not with the next poll's verdict: while a member is frozen or this Pod
      // terminates, a poll can take many etcd timeouts, longer than the fast path's budget
      decisionChanged.run();
      if (result.decision() instanceof ScaleDownDecision.Blocked b) {
        EventLog.warn("scale-down-blocked", "reason", b.reason(), "detail", b.message());
        PodEvent event = PodEvent.warning(b.reason(), b.message());
        podEvents.accept(event);
        statefulSetEvent(event);
      } else if (!(result.decision() instanceof ScaleDownDecision.Idle)) {
        EventLog.info("scale-down-decision", "decision", described);
      }
    }
    result.attempt().ifPresent(this::acted);
  }

  private void acted(RemovalAttempt a) {
    synchronized (history) {
      history.addFirst(a);
      while (history.size() > HISTORY) {
        history.removeLast();
      }
    }
    metrics.recordRemoval(a.path(), a.result());
    Object[] fields = {
      "action", a.action(),
      "memberId", Long.toHexString(a.memberId()),
      "pod", a.pod(),
      "path", a.path(),
      "result", a.result(),
      "detail", a.detail()
    };
    if (a.result().equals("failed")) {
      EventLog.warn("scale-down-act-failed", fields);
      String key = a.memberId() + "|" + a.detail();
      if (key.equals(lastFailure)) {
        return; // a retry failing the same way: logged and counted, not published again
      }
      lastFailure = key;
    } else {
      EventLog.info("scale-down-acted", fields);
      lastFailure = "";
    }
    String reason =
        switch (a.result()) {
          case "removed" -> "SurplusMemberRemoved";
          case "already-removed" -> "SurplusMemberAlreadyRemoved";
          case "leader-moved" -> "SurplusLeaderMoved";
          default -> "SurplusMemberRemovalFailed";
        };
    String message =
        switch (a.action()) {
              case "move-leader" -> "moved leadership away from surplus member ";
              default -> "removed surplus member ";
            }
            + Long.toHexString(a.memberId())
            + " ("
            + a.pod()
            + ") on the "
            + a.path()
            + " path: "
            + a.result()
            + ", "
            + a.detail();
    PodEvent event =
        a.result().equals("failed")
            ? PodEvent.warning(reason, message)
            : PodEvent.normal(reason, message);
    podEvents.accept(event);
    statefulSetEvent(event);
    transitions.accept(
        new MemberTransition(
            roleAfter(a, selfId.getAsLong()),
            reason,
            message.length() > 1000 ? message.substring(0, 1000) : message,
            a.at()));
  }

  /**
   * This member's role after the act: the fast path acts on its own member (removed, or no longer
   * leading), or on a surplus member whose Pod is gone (this one's role unchanged, not known here);
   * the catch-up path is the leader's agent acting on another member.
   */
  private static MemberRole roleAfter(RemovalAttempt a, long self) {
    if (a.path().equals(io.etcdmemberagent.core.membership.ScaleDownRule.CATCH_UP_PATH)) {
      return MemberRole.LEADER;
    }
    if (a.memberId() != self) {
      return MemberRole.UNKNOWN;
    }
    if (a.action().equals("move-leader")) {
      return a.result().equals("leader-moved") ? MemberRole.FOLLOWER : MemberRole.LEADER;
    }
    return a.removedOrGone() ? MemberRole.NOT_A_MEMBER : MemberRole.UNKNOWN;
  }

  private void statefulSetEvent(PodEvent event) {
    if (statefulSet.target() instanceof io.etcdmemberagent.core.membership.ScaleTarget.Replicas r) {
      statefulSet.createEvent(r.statefulSet(), event);
    }
  }

  /** For {@code /status}: the last decision, when, and the last acts. */
  public Map<String, Object> status() {
    Map<String, Object> m = new LinkedHashMap<>();
    ScaleDownDecision d = last;
    m.put("decision", d.getClass().getSimpleName());
    m.put("reason", reason(d));
    m.put("detail", describe(d));
    m.put("at", lastAt.equals(Instant.EPOCH) ? null : lastAt.toString());
    List<Map<String, Object>> acts;
    synchronized (history) {
      acts =
          history.stream()
              .map(
                  a -> {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("at", a.at().toString());
                    x.put("action", a.action());
                    x.put("memberId", Long.toHexString(a.memberId()));
                    x.put("pod", a.pod());
                    x.put("path", a.path());
                    x.put("result", a.result());
                    x.put("detail", a.detail());
                    return x;
                  })
              .toList();
    }
    m.put("acts", acts);
    return m;
  }

  /** The last decision, for the {@code scale-down} condition. */
  public ScaleDownDecision lastDecision() {
    return last;
  }

  static String reason(ScaleDownDecision d) {
    if (d instanceof ScaleDownDecision.Idle i) {
      return i.reason();
    }
    if (d instanceof ScaleDownDecision.Blocked b) {
      return b.reason();
    }
    if (d instanceof ScaleDownDecision.AwaitTurn) {
      return "SurplusAwaitingTurn";
    }
    if (d instanceof ScaleDownDecision.MoveLeader) {
      return "SurplusLeaderMoving";
    }
    return "SurplusMemberRemoving";
  }

  static String describe(ScaleDownDecision d) {
    if (d instanceof ScaleDownDecision.Idle i) {
      return i.reason() + ": " + i.message();
    }
    if (d instanceof ScaleDownDecision.Blocked b) {
      return b.reason() + ": " + b.message();
    }
    if (d instanceof ScaleDownDecision.AwaitTurn a) {
      return "awaiting turn: " + a.message();
    }
    if (d instanceof ScaleDownDecision.MoveLeader m) {
      return "move leadership from "
          + Long.toHexString(m.leader().id())
          + " to "
          + Long.toHexString(m.toId());
    }
    ScaleDownDecision.Remove r = (ScaleDownDecision.Remove) d;
    return "remove " + Long.toHexString(r.member().id()) + " (ordinal " + r.ordinal() + ")";
  }

  @Override
  public void close() {
    thread.shutdownNow();
  }
}
