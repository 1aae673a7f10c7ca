package io.etcdmemberagent.core.publish;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Turns each poll into the EtcdMember's status and the transitions since the previous poll. What a
 * poll could not read keeps its last known value only where it is identity (cluster ID, name, URLs,
 * versions, the figures); what describes this moment (role, readiness, leader) is never carried
 * over. Pure; used by the poll thread only.
 */
public final class MemberReporter {

  private final String agentVersion;
  private final long configuredQuotaBytes;
  private MemberFacts last;
  private MemberFigures lastFigures = MemberFigures.NONE;
  private MemberRole previousRole;
  private MemberRole lastKnownRole;
  private boolean wasCorrupt;
  private boolean wasStalled;

  /**
   * {@code configuredQuotaBytes}: the quota from the flags, used when etcd does not say (< 3.6).
   */
  public MemberReporter(String agentVersion, long configuredQuotaBytes) {
    this.agentVersion = agentVersion;
    this.configuredQuotaBytes = configuredQuotaBytes;
  }

  /** One poll's status and what changed since the previous one. */
  public record Observation(MemberReport report, List<MemberTransition> transitions) {
    public Observation {
      transitions = List.copyOf(transitions);
    }
  }

  public Observation observe(PollOutcome outcome) {
    Verdict verdict = outcome.verdict();
    MemberSnapshot snapshot = outcome.snapshot();
    MemberRole role = MemberRole.of(verdict, snapshot.local());
    Optional<LocalStatus> local =
        snapshot.local() instanceof LocalObservation.Answered a
            ? Optional.of(a.status())
            : Optional.empty();
    Optional<MemberInfo> own =
        snapshot.membership() instanceof Membership.Known k
            ? k.own(verdict.memberId(), snapshot.ownPeerUrls())
            : Optional.empty();
    MemberFacts facts = facts(verdict, role, local, own, snapshot.ownPeerUrls());
    MemberFigures figures =
        local
            .map(
                s ->
                    new MemberFigures(
                        verdict.lag(),
                        s.dbSize(),
                        s.dbSizeInUse(),
                        s.dbSizeQuota() > 0 ? s.dbSizeQuota() : configuredQuotaBytes))
            .orElse(
                new MemberFigures(
                    verdict.lag(),
                    lastFigures.dbSizeBytes(),
                    lastFigures.dbSizeInUseBytes(),
                    lastFigures.quotaBytes()));
    List<MemberTransition> transitions = transitions(outcome, role, facts);
    last = facts;
    lastFigures = figures;
    return new Observation(
        new MemberReport(facts, figures, DesiredConditions.from(verdict, outcome.progress())),
        transitions);
  }

  private MemberFacts facts(
      Verdict verdict,
      MemberRole role,
      Optional<LocalStatus> local,
      Optional<MemberInfo> own,
      List<String> ownPeerUrls) {
    Optional<MemberFacts> before = Optional.ofNullable(last);
    List<String> peerUrls =
        own.map(MemberInfo::peerUrls)
            .filter(u -> !u.isEmpty())
            .or(() -> before.map(MemberFacts::peerUrls).filter(u -> !u.isEmpty()))
            .orElse(ownPeerUrls);
    boolean learner =
        switch (role) {
          case LEARNER -> true;
          case LEADER, FOLLOWER -> false;
          case NOT_STARTED -> own.map(MemberInfo::learner).orElse(false);
          case NOT_A_MEMBER -> false;
          case UNKNOWN -> before.map(MemberFacts::learner).orElse(false);
        };
    boolean started =
        role == MemberRole.UNKNOWN
            ? before.map(MemberFacts::started).orElse(false)
            : role.voter() || role == MemberRole.LEARNER;
    return new MemberFacts(
        verdict.memberId(),
        local
            .map(LocalStatus::clusterId)
            .filter(id -> id != 0)
            .or(() -> before.map(MemberFacts::clusterId))
            .orElse(0L),
        own.map(MemberInfo::name)
            .filter(n -> !n.isEmpty())
            .or(() -> before.map(MemberFacts::name))
            .orElse(""),
        peerUrls,
        own.map(MemberInfo::clientUrls)
            .filter(u -> !u.isEmpty())
            .or(() -> before.map(MemberFacts::clientUrls))
            .orElse(List.of()),
        role,
        verdict.ready(),
        learner,
        started,
        local.map(LocalStatus::leaderId).orElse(0L),
        local.map(LocalStatus::raftTerm).or(() -> before.map(MemberFacts::raftTerm)).orElse(0L),
        peerUrls.stream().anyMatch(u -> u.startsWith("https://")),
        verdict.peerTls().reason(),
        verdict.peerTls().passed(),
        verdict.disk().map(Check::reason).orElse("NotChecked"),
        verdict.ownAlarms(),
        local.map(LocalStatus::version).or(() -> before.map(MemberFacts::etcdVersion)).orElse(""),
        local
            .map(LocalStatus::storageVersion)
            .or(() -> before.map(MemberFacts::storageVersion))
            .orElse(""),
        agentVersion);
  }

  private List<MemberTransition> transitions(
      PollOutcome outcome, MemberRole role, MemberFacts facts) {
    List<MemberTransition> out = new ArrayList<>();
    // Seconds, as the API server keeps them: a history read back equals the one written.
    java.time.Instant at =
        outcome.verdict().decidedAt().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    String id = Long.toHexString(facts.memberId());
    if (previousRole == null) {
      out.add(firstLook(role, id, at));
    } else if (role != previousRole) {
      out.addAll(roleChange(role, outcome, id, at));
    }
    boolean corrupt = facts.alarms().contains("CORRUPT");
    if (corrupt && !wasCorrupt) {
      out.add(
          new MemberTransition(
              role, "DBCorruptionDetected", "etcd raised the CORRUPT alarm for member " + id, at));
    }
    boolean stalled = outcome.progress().stalled();
    if (stalled && !wasStalled) {
      out.add(
          new MemberTransition(
              role,
              "LearnerStalled",
              "a learner without progress for "
                  + outcome.progress().sinceProgress().toSeconds()
                  + "s",
              at));
    }
    wasCorrupt = corrupt;
    wasStalled = stalled;
    previousRole = role;
    if (role != MemberRole.UNKNOWN) {
      lastKnownRole = role;
    }
    return out;
  }

  /** The reason a transition carries when the agent first sees its member (not a change). */
  public static final String OBSERVED = "Observed";

  public static final String JOINED_AS_LEARNER = "JoinedAsLearner";

  /**
   * The agent's first look: a learner has joined as one (the agent usually starts after etcd has
   * joined), anything else is just observed.
   */
  private static MemberTransition firstLook(MemberRole role, String id, java.time.Instant at) {
    if (role == MemberRole.LEARNER) {
      return new MemberTransition(
          role,
          JOINED_AS_LEARNER,
          "member " + id + " is a learner of the cluster (first seen by this agent)",
          at);
    }
    return new MemberTransition(role, OBSERVED, "first seen by this agent: " + role.text(), at);
  }

  private List<MemberTransition> roleChange(
      MemberRole role, PollOutcome outcome, String id, java.time.Instant at) {
    if (role == MemberRole.UNKNOWN) {
      Check serving = outcome.verdict().check(CheckNames.SERVING).orElse(null);
      String why = serving == null ? outcome.verdict().stateDetail() : serving.message();
      return List.of(
          new MemberTransition(role, "MemberUnreachable", "the local member: " + why, at));
    }
    if (lastKnownRole == null) {
      return List.of(firstLook(role, id, at));
    }
    MemberRole from = lastKnownRole;
    if (from == role) {
      return List.of(
          new MemberTransition(role, "MemberReachable", "the local member answers again", at));
    }
    List<MemberTransition> out = new ArrayList<>();
    switch (role) {
      case LEARNER ->
          out.add(
              new MemberTransition(
                  role, JOINED_AS_LEARNER, "member " + id + " is a learner of the cluster", at));
      case FOLLOWER, LEADER -> {
        if (from == MemberRole.LEARNER) {
          out.add(
              new MemberTransition(
                  MemberRole.FOLLOWER,
                  "PromotedAsVotingMember",
                  "member " + id + " is a voting member",
                  at));
        } else if (from == MemberRole.LEADER) {
          out.add(
              new MemberTransition(
                  role, "LostClusterLeadership", "member " + id + " is no longer the leader", at));
        } else if (!from.voter()) {
          out.add(
              new MemberTransition(
                  MemberRole.FOLLOWER,
                  "StartedAsVotingMember",
                  "member " + id + " started as a voting member",
                  at));
        }
        if (role == MemberRole.LEADER) {
          out.add(
              new MemberTransition(
                  role, "GainedClusterLeadership", "member " + id + " is the leader", at));
        }
      }
      case NOT_STARTED ->
          out.add(
              new MemberTransition(
                  role,
                  "WaitingToStart",
                  "member " + id + " is in the member list but has not started",
                  at));
      case NOT_A_MEMBER ->
          out.add(
              new MemberTransition(
                  role, "RemovedFromCluster", "this member is not in the member list", at));
      default -> {}
    }
    return out;
  }
}
