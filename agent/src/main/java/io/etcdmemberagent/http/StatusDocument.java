package io.etcdmemberagent.http;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.disk.DbFileState;
import io.etcdmemberagent.core.disk.DiskFacts;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.LearnerProgress;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.publish.DesiredConditions;
import io.etcdmemberagent.core.publish.PodCondition;
import io.etcdmemberagent.core.tls.PeerTlsFacts;
import io.etcdmemberagent.core.tls.PeerUrlFacts;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON document of {@code /status}: the whole member view of the last poll. */
final class StatusDocument {

  private StatusDocument() {}

  static Map<String, Object> of(AgentView view) {
    Map<String, Object> doc = new LinkedHashMap<>();
    List<Check> checks = view.readinessChecks();
    doc.put("ready", checks.stream().allMatch(Check::passed));
    doc.put("checks", checks.stream().map(StatusDocument::check).toList());
    view.latest()
        .ifPresentOrElse(outcome -> poll(doc, outcome), () -> doc.put("state", "Starting"));
    doc.putAll(view.statusExtras());
    return doc;
  }

  private static void poll(Map<String, Object> doc, PollOutcome outcome) {
    var verdict = outcome.verdict();
    var snapshot = outcome.snapshot();
    doc.put("state", verdict.state().reason());
    doc.put("stateDetail", verdict.stateDetail());
    doc.put("memberId", verdict.memberId() == 0 ? null : Long.toHexString(verdict.memberId()));
    doc.put("lag", verdict.lag());
    doc.put(
        "poll",
        Map.of(
            "sequence", outcome.sequence(),
            "startedAt", snapshot.takenAt().toString(),
            "tookMillis", outcome.took().toMillis()));
    doc.put("local", local(snapshot.local()));
    doc.put("leader", leader(snapshot.leader()));
    doc.put("members", members(snapshot.membership()));
    doc.put(
        "alarms",
        verdict.alarms().stream()
            .map(a -> Map.of("memberId", Long.toHexString(a.memberId()), "type", a.type()))
            .toList());
    doc.put(
        "conditions",
        DesiredConditions.from(verdict, outcome.progress()).stream()
            .map(StatusDocument::condition)
            .toList());
    doc.put("learner", learner(outcome.progress()));
    snapshot.disk().ifPresent(d -> doc.put("disk", disk(d, verdict.disk())));
    doc.put("peerTls", peerTls(snapshot.peerTls(), verdict.peerTls()));
    doc.put("promotion", promotion(outcome));
  }

  private static Map<String, Object> peerTls(PeerTlsFacts facts, Check check) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("check", check(check));
    if (facts instanceof PeerTlsFacts.Inspected inspected) {
      m.put("checkedAt", inspected.checkedAt().toString());
      m.put("urls", inspected.urls().stream().map(StatusDocument::peerUrl).toList());
    } else {
      m.put("unknown", ((PeerTlsFacts.Unknown) facts).reason());
    }
    return m;
  }

  private static Map<String, Object> peerUrl(PeerUrlFacts url) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("url", url.url());
    if (url instanceof PeerUrlFacts.Plain) {
      m.put("https", false);
    } else if (url instanceof PeerUrlFacts.Unavailable u) {
      m.put("https", true);
      m.put("unavailable", u.reason());
    } else if (url instanceof PeerUrlFacts.Inspected i) {
      m.put("https", true);
      m.put("source", i.source());
      m.put("subject", i.subject());
      m.put("notBefore", i.notBefore().toString());
      m.put("notAfter", i.notAfter().toString());
      m.put("hostMatches", i.hostMatches());
      m.put("trust", i.trust().name());
      if (!i.trustDetail().isEmpty()) {
        m.put("trustDetail", i.trustDetail());
      }
    }
    return m;
  }

  private static Map<String, Object> disk(DiskFacts d, java.util.Optional<Check> check) {
    Map<String, Object> m = new LinkedHashMap<>();
    check.ifPresent(c -> m.put("check", check(c)));
    m.put("exists", d.exists());
    m.put("readable", d.readable());
    m.put("looksLikeEtcd", d.looksLikeEtcd());
    m.put("usableBytes", d.usableBytes());
    m.put("totalBytes", d.totalBytes());
    m.put("freeRatio", d.freeRatio());
    m.put("freeInodes", d.freeInodes());
    m.put("totalInodes", d.totalInodes());
    m.put("dbFile", d.dbFile().getClass().getSimpleName());
    if (d.dbFile() instanceof DbFileState.Corrupt c) {
      m.put("dbFileDetail", c.detail());
    } else if (d.dbFile() instanceof DbFileState.Unreadable u) {
      m.put("dbFileDetail", u.detail());
    }
    m.put("lastFsyncMicros", d.lastFsync().map(f -> f.toNanos() / 1000));
    m.put("fsyncError", d.fsyncError());
    return m;
  }

  private static Map<String, Object> learner(LearnerProgress p) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("watching", p.watching());
    m.put("stalled", p.stalled());
    m.put("sinceProgressSeconds", p.sinceProgress().toSeconds());
    m.put("catchUpRatio", p.catchUpRatio().isPresent() ? p.catchUpRatio().getAsDouble() : null);
    m.put("joinToVoterMillis", p.joinToVoter().map(Duration::toMillis));
    return m;
  }

  private static Map<String, Object> promotion(PollOutcome outcome) {
    Map<String, Object> m = new LinkedHashMap<>();
    PromotionDecision d = outcome.promotion();
    m.put("decision", d.getClass().getSimpleName());
    if (d instanceof PromotionDecision.Hold hold) {
      m.put("reason", hold.reason());
      m.put("message", hold.message());
    } else if (d instanceof PromotionDecision.BackingOff b) {
      m.put("until", b.until().toString());
      m.put("lastResult", b.lastResult());
    }
    m.put(
        "history",
        outcome.promotions().stream()
            .map(
                a -> {
                  Map<String, Object> h = new LinkedHashMap<>();
                  h.put("at", a.at().toString());
                  h.put("memberId", Long.toHexString(a.memberId()));
                  h.put("lag", a.lag());
                  h.put("result", a.result().label());
                  h.put("detail", a.detail());
                  h.put("tookMillis", a.took().toMillis());
                  return h;
                })
            .toList());
    return m;
  }

  private static Map<String, Object> check(Check c) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", c.name());
    m.put("passed", c.passed());
    m.put("reason", c.reason());
    m.put("message", c.message());
    return m;
  }

  private static Map<String, Object> condition(PodCondition c) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", c.name());
    m.put("status", c.status().text());
    m.put("reason", c.reason());
    m.put("message", c.message());
    return m;
  }

  private static Map<String, Object> local(LocalObservation local) {
    Map<String, Object> m = new LinkedHashMap<>();
    if (!(local instanceof LocalObservation.Answered a)) {
      m.put("answered", false);
      m.put("outcome", local.getClass().getSimpleName());
      m.put("detail", local.detail());
      return m;
    }
    LocalStatus s = a.status();
    m.put("answered", true);
    m.put("memberId", Long.toHexString(s.memberId()));
    m.put("isLearner", s.learner());
    m.put("leaderId", s.leaderId() == 0 ? null : Long.toHexString(s.leaderId()));
    m.put("raftIndex", s.raftIndex());
    m.put("raftAppliedIndex", s.raftAppliedIndex());
    m.put("raftTerm", s.raftTerm());
    m.put("dbSize", s.dbSize());
    m.put("dbSizeInUse", s.dbSizeInUse());
    m.put("version", s.version());
    m.put("errors", s.errors());
    // 3.6+ always reports its quota; its storage version only once the cluster version is set
    boolean reports36 = s.dbSizeQuota() > 0;
    m.put("storageVersion", s.storageVersion().isEmpty() ? null : s.storageVersion());
    m.put("dbSizeQuota", s.dbSizeQuota() > 0 ? s.dbSizeQuota() : null);
    Map<String, Object> downgrade = new LinkedHashMap<>();
    downgrade.put("enabled", s.downgrade().enabled());
    downgrade.put("targetVersion", s.downgrade().targetVersion());
    m.put("downgrade", reports36 ? downgrade : null);
    return m;
  }

  private static Map<String, Object> leader(LeaderObservation leader) {
    Map<String, Object> m = new LinkedHashMap<>();
    if (leader instanceof LeaderObservation.Answered a) {
      m.put("id", Long.toHexString(a.leaderId()));
      m.put("raftIndex", a.raftIndex());
    } else if (leader instanceof LeaderObservation.Unavailable u) {
      m.put("unavailable", u.reason());
    }
    return m;
  }

  private static Object members(Membership membership) {
    if (membership instanceof Membership.Unknown u) {
      return Map.of("unavailable", u.reason());
    }
    Membership.Known known = (Membership.Known) membership;
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("readFrom", known.readFrom());
    m.put("list", known.members().stream().map(StatusDocument::member).toList());
    return m;
  }

  private static Map<String, Object> member(MemberInfo info) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", Long.toHexString(info.id()));
    m.put("name", info.name());
    m.put("isLearner", info.learner());
    m.put("started", info.started());
    m.put("peerURLs", info.peerUrls());
    m.put("clientURLs", info.clientUrls());
    return m;
  }
}
