package io.etcdmemberagent.metrics;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.MemberState;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.disk.DbFileState;
import io.etcdmemberagent.core.disk.DiskFacts;
import io.etcdmemberagent.core.poll.AgentMetrics;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.PromoteResult;
import io.etcdmemberagent.core.promotion.PromotionAttempt;
import io.etcdmemberagent.core.tls.PeerTlsFacts;
import io.etcdmemberagent.core.tls.PeerUrlFacts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;

/**
 * The agent's Prometheus metrics (prefix {@code etcd_member_agent_}) on a Micrometer registry.
 * Gauges read the latest poll outcome, so a scrape never touches etcd.
 */
public final class MicrometerMetrics implements AgentMetrics, AutoCloseable {

  static final String PREFIX = "etcd_member_agent_";
  static final String OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8";
  static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final AtomicReference<PollOutcome> latest = new AtomicReference<>();
  private final Timer pollDuration;
  private final Counter polls;
  private final Timer promoteDuration;
  private final Timer patchDuration;
  private final Timer fsyncProbe;
  private volatile double kubePending = Double.NaN;
  private volatile double kubeLastSync = Double.NaN;
  private volatile double clientCertExpiry = Double.NaN;
  private volatile double servingCertExpiry = Double.NaN;
  private volatile double localLastAnswered = Double.NaN;
  private final MultiGauge versionInfo;
  private volatile Tags versionTags = Tags.empty();
  private volatile double scaleDownBlocked;
  private volatile double surplusVoters;
  private final JvmGcMetrics gcMetrics = new JvmGcMetrics();

  public MicrometerMetrics() {
    pollDuration = histogram("poll_duration", "Time one poll of etcd took");
    polls = Counter.builder(PREFIX + "polls").description("Polls of etcd").register(registry);
    promoteDuration =
        histogram(
            "promote_attempt_duration",
            "Time one promote attempt took, with the member list re-read on error");
    patchDuration = histogram("kube_patch_duration", "Time one pods/status patch took");
    Gauge.builder(PREFIX + "kube_pending", this, m -> m.kubePending)
        .description("1 while a desired condition state has not been written to the API server")
        .register(registry);
    Gauge.builder(PREFIX + "kube_last_sync_timestamp_seconds", this, m -> m.kubeLastSync)
        .description("when the API server last accepted our conditions (Unix time)")
        .register(registry);
    Gauge.builder(PREFIX + "scale_down_blocked", this, m -> m.scaleDownBlocked)
        .description("1 while this agent's scale-down rule blocks a surplus member's removal")
        .register(registry);
    Gauge.builder(PREFIX + "surplus_voters", this, m -> m.surplusVoters)
        .description(
            "surplus members (ordinal outside the StatefulSet's range) still voting, as this agent's"
                + " last scale-down round saw them (the leader's agent and terminating ones decide)")
        .register(registry);
    for (PromoteResult result : PromoteResult.values()) {
      Counter.builder(PREFIX + "promotions")
          .description("Promotion attempts by result")
          .tag("result", result.label())
          .register(registry);
    }
    gauge(
        "learner_catch_up_ratio",
        "a learner's applied index / the leader's raftIndex (NaN when not a learner)",
        o -> o.progress().catchUpRatio().orElse(Double.NaN));
    gauge(
        "learner_stalled",
        "1 when a learner made no progress for --stall-timeout",
        o -> bit(o.progress().stalled()));
    gauge(
        "join_to_voter_seconds",
        "time from first seeing this member as a learner to seeing it as a voter",
        o -> o.progress().joinToVoter().map(d -> d.toMillis() / 1000.0).orElse(Double.NaN));
    gauge(
        "is_learner",
        "1 when the local member is a started learner",
        o -> state(o, MemberState.LEARNER));
    gauge(
        "is_voter", "1 when the local member is a started voter", o -> state(o, MemberState.VOTER));
    gauge("ready", "1 when every readiness check passes", o -> bit(o.verdict().ready()));
    gauge(
        "lag_entries",
        "leader raftIndex minus local raftAppliedIndex (NaN when unknown)",
        o -> o.verdict().lag().isPresent() ? o.verdict().lag().getAsLong() : Double.NaN);
    gauge("applied_index", "local raftAppliedIndex", o -> localStatus(o, "applied"));
    gauge("raft_index", "local raftIndex (committed)", o -> localStatus(o, "raft"));
    gauge(
        "leader_raft_index",
        "the leader's raftIndex (committed)",
        o ->
            o.snapshot().leader() instanceof LeaderObservation.Answered a
                ? a.raftIndex()
                : Double.NaN);
    gauge("db_size_bytes", "local backend database size", o -> localStatus(o, "db"));
    gauge(
        "db_size_in_use_bytes",
        "local backend database size in use",
        o -> localStatus(o, "dbInUse"));
    gauge("has_leader", "1 when the local member knows a leader", o -> localStatus(o, "hasLeader"));
    gauge(
        "db_size_quota_bytes",
        "the backend quota the local member reports (etcd 3.6+; NaN before)",
        o -> localStatus(o, "quota"));
    gauge(
        "downgrade_enabled",
        "1 while a cluster downgrade is enabled, as the local member reports (etcd 3.6+)",
        o -> localStatus(o, "downgrade"));
    gauge(
        "last_poll_timestamp_seconds",
        "when the last poll started (Unix time)",
        o -> o.snapshot().takenAt().toEpochMilli() / 1000.0);
    gauge(
        "disk_healthy",
        "1 when the disk check passes (NaN without --data-dir, or when the agent cannot read it)",
        o ->
            o.verdict()
                .disk()
                .filter(io.etcdmemberagent.core.disk.DiskEvaluator::judged)
                .map(c -> bit(c.passed()))
                .orElse(Double.NaN));
    gauge(
        "disk_free_ratio",
        "free share of the data dir's filesystem",
        o -> o.snapshot().disk().map(DiskFacts::freeRatio).orElse(Double.NaN));
    gauge(
        "disk_free_inodes_ratio",
        "free share of the data dir filesystem's inodes (NaN when unknown)",
        o ->
            o.snapshot()
                .disk()
                .filter(DiskFacts::inodesKnown)
                .map(DiskFacts::freeInodeRatio)
                .orElse(Double.NaN));
    gauge(
        "db_file_corrupt",
        "1 when neither meta page of member/snap/db is valid (NaN without --data-dir)",
        o ->
            o.snapshot()
                .disk()
                .map(d -> bit(d.dbFile() instanceof DbFileState.Corrupt))
                .orElse(Double.NaN));
    gauge(
        "local_member_up",
        "1 when the local member answered Status in the last poll",
        o -> bit(o.snapshot().local() instanceof LocalObservation.Answered));
    Gauge.builder(
            PREFIX + "local_member_last_answer_timestamp_seconds", this, m -> m.localLastAnswered)
        .description("when the local member last answered Status (Unix time)")
        .register(registry);
    for (String type : List.of("NOSPACE", "CORRUPT")) {
      Gauge.builder(
              PREFIX + "alarm",
              latest,
              ref -> ref.get() == null ? Double.NaN : ownAlarm(ref.get(), type))
          .description("1 while this etcd alarm is raised for the local member")
          .tag("type", type)
          .register(registry);
    }
    gauge(
        "peer_tls_ok",
        "1 when the peer-TLS check passes",
        o -> bit(o.verdict().peerTls().passed()));
    Gauge.builder(PREFIX + "cert_expiry_timestamp_seconds", this, m -> m.clientCertExpiry)
        .description("when the certificate stops being valid (Unix time)")
        .tag("cert", "client")
        .register(registry);
    Gauge.builder(PREFIX + "cert_expiry_timestamp_seconds", this, m -> m.servingCertExpiry)
        .description("when the certificate stops being valid (Unix time)")
        .tag("cert", "serving")
        .register(registry);
    Gauge.builder(
            PREFIX + "cert_expiry_timestamp_seconds",
            latest,
            ref -> ref.get() == null ? Double.NaN : peerExpiry(ref.get()))
        .description("when the certificate stops being valid (Unix time)")
        .tag("cert", "peer")
        .register(registry);
    for (String result : List.of("success", "failure")) {
      Counter.builder(PREFIX + "tls_reloads")
          .description("Reloads of changed TLS files (etcd client, HTTPS serving) by result")
          .tag("result", result)
          .register(registry);
    }
    versionInfo =
        MultiGauge.builder(PREFIX + "etcd_version_info")
            .description(
                "1, labelled with the local member's etcd version and storage version (3.6+)")
            .register(registry);
    fsyncProbe = histogram("fsync_probe", "Time a 4 KiB write+fsync next to the data dir took");
    for (String check : CheckNames.ALL) {
      Gauge.builder(PREFIX + "check_passed", latest, ref -> checkPassed(ref.get(), check))
          .description("1 when the readiness check passes")
          .tag("check", check)
          .register(registry);
    }
    for (MemberState s : MemberState.values()) {
      Gauge.builder(
              PREFIX + "member_state",
              latest,
              ref -> ref.get() == null ? Double.NaN : state(ref.get(), s))
          .description("1 for the member's current state")
          .tag("state", s.reason())
          .register(registry);
    }
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    gcMetrics.bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
  }

  private Timer histogram(String name, String help) {
    return Timer.builder(PREFIX + name)
        .description(help)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(30))
        .register(registry);
  }

  private void gauge(String name, String help, ToDoubleFunction<PollOutcome> value) {
    Gauge.builder(
            PREFIX + name,
            latest,
            ref -> ref.get() == null ? Double.NaN : value.applyAsDouble(ref.get()))
        .description(help)
        .register(registry);
  }

  private static double bit(boolean b) {
    return b ? 1 : 0;
  }

  private static double state(PollOutcome o, MemberState s) {
    return bit(o.verdict().state() == s);
  }

  private static double checkPassed(PollOutcome o, String check) {
    if (o == null) {
      return Double.NaN;
    }
    return o.verdict()
        .check(check)
        .map(Check::passed)
        .map(MicrometerMetrics::bit)
        .orElse(Double.NaN);
  }

  private static double ownAlarm(PollOutcome o, String type) {
    return bit(
        o.verdict().alarms().stream()
            .anyMatch(a -> a.memberId() == o.verdict().memberId() && a.type().equals(type)));
  }

  /** The earliest end of validity among this member's peer certificates. */
  private static double peerExpiry(PollOutcome o) {
    if (!(o.snapshot().peerTls() instanceof PeerTlsFacts.Inspected inspected)) {
      return Double.NaN;
    }
    return inspected.urls().stream()
        .filter(PeerUrlFacts.Inspected.class::isInstance)
        .map(u -> ((PeerUrlFacts.Inspected) u).notAfter())
        .min(Instant::compareTo)
        .map(t -> t.toEpochMilli() / 1000.0)
        .orElse(Double.NaN);
  }

  private static double localStatus(PollOutcome o, String field) {
    if (!(o.snapshot().local() instanceof LocalObservation.Answered a)) {
      return Double.NaN;
    }
    var s = a.status();
    return switch (field) {
      case "applied" -> s.raftAppliedIndex();
      case "raft" -> s.raftIndex();
      case "db" -> s.dbSize();
      case "dbInUse" -> s.dbSizeInUse();
      case "hasLeader" -> bit(s.hasLeader());
      case "quota" -> s.dbSizeQuota() > 0 ? s.dbSizeQuota() : Double.NaN;
      case "downgrade" -> s.dbSizeQuota() > 0 ? bit(s.downgrade().enabled()) : Double.NaN;
      default -> throw new IllegalArgumentException(field);
    };
  }

  @Override
  public void recordPoll(PollOutcome outcome) {
    latest.set(outcome);
    if (outcome.snapshot().local() instanceof LocalObservation.Answered a) {
      localLastAnswered = outcome.snapshot().takenAt().toEpochMilli() / 1000.0;
      Tags tags =
          Tags.of("version", a.status().version(), "storage_version", a.status().storageVersion());
      if (!tags.equals(versionTags)) {
        versionTags = tags;
        versionInfo.register(List.of(MultiGauge.Row.of(tags, 1)), true);
      }
    }
    outcome
        .snapshot()
        .disk()
        .filter(DiskFacts::probedNow)
        .flatMap(DiskFacts::lastFsync)
        .ifPresent(fsyncProbe::record);
    pollDuration.record(outcome.took());
    polls.increment();
    for (PollError error : pollErrors(outcome)) {
      Counter.builder(PREFIX + "poll_errors")
          .description("Failed etcd calls in polls, by call and reason")
          .tag("call", error.call())
          .tag("reason", error.reason())
          .register(registry)
          .increment();
    }
    // after the change, so that a render running meanwhile is redone (ScrapeCache)
    rendered.invalidate();
  }

  @Override
  public void recordPromotion(PromotionAttempt attempt) {
    Counter.builder(PREFIX + "promotions")
        .description("Promotion attempts by result")
        .tag("result", attempt.result().label())
        .register(registry)
        .increment();
    promoteDuration.record(attempt.took());
    rendered.invalidate();
  }

  @Override
  public void recordScaleDown(boolean blocked, int surplusVoters) {
    scaleDownBlocked = blocked ? 1 : 0;
    this.surplusVoters = surplusVoters;
    rendered.invalidate();
  }

  @Override
  public void recordRemoval(String reason, String result) {
    Counter.builder(PREFIX + "member_removals")
        .description(
            "Acts of the scale-down rule (member removals, leadership moves) by path and result")
        .tag("reason", reason)
        .tag("result", result)
        .register(registry)
        .increment();
    rendered.invalidate();
  }

  @Override
  public void recordPatch(String result, Duration took) {
    Counter.builder(PREFIX + "kube_patches")
        .description("pods/status patches by result")
        .tag("result", result)
        .register(registry)
        .increment();
    patchDuration.record(took);
    rendered.invalidate();
  }

  @Override
  public void recordEvent(String result) {
    Counter.builder(PREFIX + "kube_events")
        .description("Pod events by result")
        .tag("result", result)
        .register(registry)
        .increment();
    rendered.invalidate();
  }

  @Override
  public void recordKubeState(boolean pending, Instant lastSync) {
    kubePending = pending ? 1 : 0;
    kubeLastSync = lastSync.equals(Instant.EPOCH) ? Double.NaN : lastSync.toEpochMilli() / 1000.0;
    rendered.invalidate();
  }

  @Override
  public void recordTlsReload(String result) {
    Counter.builder(PREFIX + "tls_reloads")
        .description("Reloads of changed TLS files (etcd client, HTTPS serving) by result")
        .tag("result", result)
        .register(registry)
        .increment();
    rendered.invalidate();
  }

  @Override
  public void recordCertificateExpiry(String certificate, Instant notAfter) {
    if (certificate.equals("client")) {
      clientCertExpiry = notAfter.toEpochMilli() / 1000.0;
    } else if (certificate.equals("serving")) {
      servingCertExpiry = notAfter.toEpochMilli() / 1000.0;
    }
    rendered.invalidate();
  }

  private record PollError(String call, String reason) {}

  private static List<PollError> pollErrors(PollOutcome outcome) {
    var snapshot = outcome.snapshot();
    var errors = new java.util.ArrayList<PollError>();
    LocalObservation local = snapshot.local();
    if (local instanceof LocalObservation.TimedOut) {
      errors.add(new PollError("local_status", "timeout"));
    } else if (local instanceof LocalObservation.Refused) {
      errors.add(new PollError("local_status", "refused"));
    } else if (local instanceof LocalObservation.Failed) {
      errors.add(new PollError("local_status", "error"));
    }
    if (local instanceof LocalObservation.Denied d) {
      errors.add(new PollError("local_status", d.failure().label()));
    }
    if (snapshot.membership() instanceof Membership.Unknown u) {
      errors.add(new PollError("member_list", u.failure().label()));
    }
    if (local instanceof LocalObservation.Answered a
        && a.status().hasLeader()
        && snapshot.leader() instanceof LeaderObservation.Unavailable) {
      errors.add(new PollError("leader_status", "unavailable"));
    }
    return errors;
  }

  /** The content type to answer with: OpenMetrics when the scraper asks for it. */
  public String contentType(String accept) {
    return accept != null && accept.contains("application/openmetrics-text")
        ? OPENMETRICS
        : PROMETHEUS_TEXT;
  }

  /** The exposition as bytes, from {@link ScrapeCache}: a scrape storm renders once a second. */
  public byte[] scrape(String accept) {
    return rendered.get(contentType(accept), registry::scrape);
  }

  private final ScrapeCache rendered = new ScrapeCache();

  @Override
  public void close() {
    gcMetrics.close();
    registry.close();
  }
}
