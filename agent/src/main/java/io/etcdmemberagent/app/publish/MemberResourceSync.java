package io.etcdmemberagent.app.publish;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.publish.MemberReport;
import io.etcdmemberagent.core.publish.MemberReporter;
import io.etcdmemberagent.core.publish.MemberResourceApi;
import io.etcdmemberagent.core.publish.MemberResourceApi.MemberResourceView;
import io.etcdmemberagent.core.publish.MemberStatusDocument;
import io.etcdmemberagent.core.publish.MemberStatusLedger;
import io.etcdmemberagent.core.publish.MemberTransition;
import io.etcdmemberagent.core.publish.PodApi.PodApiException;
import io.etcdmemberagent.support.EventLog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Keeps this member's EtcdMember on a thread of its own, shaped like the Pod publisher ({@link
 * KubeSync}): creates the object if absent, then writes its status only when the ledger says so (a
 * transition; figures at most every resync interval), at most about one write a second, with
 * backoff and Retry-After on failures. Every resync interval it re-reads the object (re-created if
 * someone deleted it, conditions restored if someone removed them). When the CRD is not served it
 * says so once and looks again every resync interval; nothing else of the agent depends on it.
 */
public final class MemberResourceSync implements AutoCloseable {

  private final MemberResourceApi api;
  private final Clock clock;
  private final Duration resyncInterval;
  private final boolean required;
  private final String resource;
  private final MemberStatusLedger ledger;
  private final AtomicReference<MemberReport> desired = new AtomicReference<>();
  private final ConcurrentLinkedQueue<MemberTransition> incoming = new ConcurrentLinkedQueue<>();
  private final TokenBucket writes = new TokenBucket(5, Duration.ofSeconds(1));
  private final ApiBackoff backoff;
  private final Refusals refusals = new Refusals();
  private final WriterLoop writer;

  private volatile Boolean served;
  private volatile MemberResourceView object;
  private volatile Instant lastSync = Instant.EPOCH;
  private volatile String lastError = "";
  private volatile int writesDone;
  private volatile boolean pending = true;
  private Instant nextResync = Instant.MIN;

  /**
   * @param required {@code --member-resource=on}: a CRD that is not served is an error to report,
   *     not a quiet "off"
   * @param resource the resource's full name, for messages ({@code etcdmembers.<group>})
   */
  public MemberResourceSync(
      MemberResourceApi api,
      Clock clock,
      Duration resyncInterval,
      boolean required,
      String resource) {
    this.api = api;
    this.clock = clock;
    this.resyncInterval = resyncInterval;
    this.required = required;
    this.resource = resource;
    this.ledger = new MemberStatusLedger(resyncInterval);
    this.backoff = new ApiBackoff(clock);
    this.writer =
        new WriterLoop(
            "member-resource-sync",
            this::step,
            e -> {
              lastError = e.toString();
              EventLog.warn("member-resource-error", "error", e.toString());
              return backoff.after(Duration.ZERO);
            },
            () -> pending = computePending());
  }

  public void start() {
    writer.start();
  }

  /** The latest report replaces any unwritten one; transitions queue up. */
  public void offer(MemberReporter.Observation observation) {
    desired.set(observation.report());
    incoming.addAll(observation.transitions());
    writer.signal();
  }

  /** One more transition, from outside the poll (the scale-down rule). */
  public void transition(MemberTransition transition) {
    incoming.add(transition);
    writer.signal();
  }

  public Map<String, Object> status() {
    MemberResourceView o = object;
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("resource", resource);
    m.put("served", served);
    m.put("uid", o == null ? null : o.uid());
    m.put("lastSync", lastSync.equals(Instant.EPOCH) ? null : lastSync.toString());
    m.put("writes", writesDone);
    m.put("pending", pending);
    m.put("lastError", lastError.isEmpty() ? null : lastError);
    m.put("refused", refusals.snapshot());
    return m;
  }

  /** Whether a write is due that has not happened (computed on the writer thread only). */
  private boolean computePending() {
    MemberReport report = desired.get();
    return object == null
        || !incoming.isEmpty()
        || (report != null && ledger.plan(report, clock.instant()).isPresent());
  }

  /** One round; returns how long to wait before the next (unless woken by a new report). */
  private Duration step() {
    Optional<Duration> holdOff = backoff.holdOff();
    if (holdOff.isPresent()) {
      return holdOff.get();
    }
    Instant now = clock.instant();
    boolean resyncDue = !now.isBefore(nextResync);
    if (Boolean.FALSE.equals(served) && !resyncDue) {
      return untilResync();
    }
    if (!Boolean.TRUE.equals(served) || object == null || resyncDue) {
      Optional<Duration> notYet = resync();
      if (notYet.isPresent()) {
        return notYet.get();
      }
    }
    List<MemberTransition> news = new ArrayList<>();
    for (MemberTransition t; (t = incoming.poll()) != null; ) {
      news.add(t);
    }
    ledger.append(news);
    MemberReport report = desired.get();
    if (report == null) {
      return untilResync();
    }
    Optional<MemberStatusDocument> plan = ledger.plan(report, clock.instant());
    if (plan.isEmpty()) {
      return untilResync();
    }
    Duration tokenWait = writes.take(System.nanoTime());
    if (!tokenWait.isZero()) {
      return tokenWait;
    }
    KubeAnswer answer = api.patchStatus(plan.get(), object.generation());
    if (answer instanceof KubeAnswer.Done) {
      ledger.confirm(plan.get(), clock.instant());
      refusals.clear("etcdmembers/status patch");
      lastSync = clock.instant();
      lastError = "";
      writesDone++;
      backoff.reset();
      return untilResync();
    }
    return onFailure("etcdmembers/status patch", answer);
  }

  /**
   * Checks the CRD is served, finds (or creates) the object and takes what it holds; empty when the
   * round may go on to write.
   */
  private Optional<Duration> resync() {
    nextResync = clock.instant().plus(resyncInterval);
    if (!Boolean.TRUE.equals(served)) {
      try {
        served = api.served();
      } catch (PodApiException e) {
        return Optional.of(onFailure("etcdmembers discovery", e.answer()));
      }
      if (!served) {
        String why =
            "the API server does not serve "
                + resource
                + "/v1alpha1: install its CRD (the chart's crds/ or deploy/crds/); looking again"
                + " every "
                + resyncInterval.toSeconds()
                + "s";
        if (required) {
          refusals.say("etcdmembers discovery", why);
        } else {
          EventLog.info("member-resource-not-served", "detail", why);
        }
        return Optional.of(untilResync());
      }
      refusals.clear("etcdmembers discovery");
    }
    MemberObject.Found found = MemberObject.findOrCreate(api);
    if (found instanceof MemberObject.Failed f) {
      return Optional.of(onFailure(f.call(), f.answer()));
    }
    MemberObject.Present present = (MemberObject.Present) found;
    MemberResourceView view = present.view();
    if (present.created()) {
      EventLog.info("member-resource-created", "resource", resource, "uid", view.uid());
    }
    if (object == null || !object.uid().equals(view.uid())) {
      ledger.adopt(view.transitions(), view.conditions());
    } else {
      ledger.reconcile(view.transitions(), view.conditions());
    }
    object = view;
    refusals.clear("etcdmembers get");
    refusals.clear("etcdmembers create");
    refusals.clear("pods get");
    return Optional.empty();
  }

  private Duration onFailure(String call, KubeAnswer answer) {
    lastError = call + ": " + answer;
    if (answer instanceof KubeAnswer.Retry || answer instanceof KubeAnswer.Conflict) {
      EventLog.warn("member-resource-failed", "call", call, "detail", answer.toString());
      return backoff.after(ApiBackoff.retryAfter(answer));
    }
    if (answer instanceof KubeAnswer.Rejected r && r.code() == 404) {
      // The object (or its CRD) is gone: find out which in the next round.
      EventLog.info("member-resource-missing", "call", call, "detail", answer.toString());
      object = null;
      served = null;
      return backoff.after(Duration.ZERO);
    }
    refusals.say(call, answer);
    return backoff.after(ApiBackoff.MAX);
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
