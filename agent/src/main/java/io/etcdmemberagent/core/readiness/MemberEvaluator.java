package io.etcdmemberagent.core.readiness;

import io.etcdmemberagent.core.Alarm;
import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.MemberState;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.disk.DbFileState;
import io.etcdmemberagent.core.disk.DiskEvaluator;
import io.etcdmemberagent.core.disk.DiskFacts;
import io.etcdmemberagent.core.tls.PeerTlsEvaluator;
import io.etcdmemberagent.core.tls.PeerTlsPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Turns one {@link MemberSnapshot} into a {@link Verdict}. No I/O, no clock; its only state is the
 * count of healthy polls in a row that {@link ReadinessHysteresis} keeps.
 */
public final class MemberEvaluator {

  private final ReadinessPolicy policy;
  private final ReadinessHysteresis hysteresis;
  private final Optional<DiskEvaluator> disk;
  private final PeerTlsEvaluator peerTls;

  public MemberEvaluator(ReadinessPolicy policy) {
    this(policy, Optional.empty());
  }

  /** With a disk evaluator: the {@code disk} check (a readiness check when it gates). */
  public MemberEvaluator(ReadinessPolicy policy, Optional<DiskEvaluator> disk) {
    this(
        policy,
        disk,
        new PeerTlsEvaluator(new PeerTlsPolicy(java.time.Duration.ofDays(30), false)));
  }

  /** {@code peerTls}: the {@code peer-tls} check (a readiness check when it gates). */
  public MemberEvaluator(
      ReadinessPolicy policy, Optional<DiskEvaluator> disk, PeerTlsEvaluator peerTls) {
    this.policy = policy;
    this.disk = disk;
    this.peerTls = peerTls;
    this.hysteresis = new ReadinessHysteresis(policy.successThreshold());
  }

  public Verdict evaluate(MemberSnapshot snapshot) {
    LocalStatus status = answered(snapshot.local()).orElse(null);
    long memberId = status != null ? status.memberId() : snapshot.rememberedMemberId();
    Optional<MemberInfo> entry = ownEntry(snapshot, memberId);
    MemberState state = state(snapshot, status, entry);
    OptionalLong lag = lag(status, snapshot.leader());
    List<Alarm> alarms =
        status != null
            ? Alarm.parseAll(status.errors())
            : snapshot.listedAlarms().orElse(List.of());

    List<Check> checks = new ArrayList<>();
    checks.add(serving(snapshot.local(), state));
    checks.add(member(snapshot.membership(), entry, state));
    checks.add(voter(state));
    checks.add(leader(status));
    checks.add(inSync(status, snapshot.leader(), lag));
    checks.add(alarms(status, snapshot.listedAlarms().isPresent(), alarms, memberId));
    Optional<Check> diskCheck = diskCheck(snapshot, status);
    if (diskCheck.isPresent()
        && disk.get().policy().gatesReadiness()
        && DiskEvaluator.judged(diskCheck.get())) {
      checks.add(diskCheck.get());
    }
    Check peerTlsCheck = peerTls.check(snapshot.peerTls(), snapshot.takenAt());
    if (peerTls.policy().gatesReadiness()) {
      checks.add(peerTlsCheck);
    }
    if (status == null) {
      corruptDatabase(snapshot).ifPresent(c -> checks.set(0, c));
    }
    return hysteresis.apply(
        new Verdict(
            snapshot.takenAt(),
            state,
            stateDetail(state, snapshot.local()),
            memberId,
            lag,
            checks,
            alarms,
            diskCheck,
            peerTlsCheck));
  }

  /**
   * A silent local member whose db file is corrupt is not going to come back (etcd panics on it in
   * a loop): the {@code serving} check names that cause instead of a bare "unreachable".
   */
  private static Optional<Check> corruptDatabase(MemberSnapshot snapshot) {
    return snapshot
        .disk()
        .map(DiskFacts::dbFile)
        .filter(DbFileState.Corrupt.class::isInstance)
        .map(
            c ->
                Check.fail(
                    CheckNames.SERVING,
                    "CorruptDatabase",
                    "the local member does not answer and its member/snap/db is corrupt ("
                        + ((DbFileState.Corrupt) c).detail()
                        + "); etcd cannot start on it, the agent leaves the data alone: "
                        + snapshot.local().detail()));
  }

  private Optional<Check> diskCheck(MemberSnapshot snapshot, LocalStatus status) {
    if (disk.isEmpty() || snapshot.disk().isEmpty()) {
      return Optional.empty();
    }
    long dbSize = status == null ? -1 : status.dbSize();
    long quota = status == null ? 0 : status.dbSizeQuota();
    return Optional.of(disk.get().check(snapshot.disk().get(), dbSize, quota));
  }

  private static Optional<LocalStatus> answered(LocalObservation local) {
    return local instanceof LocalObservation.Answered a
        ? Optional.of(a.status())
        : Optional.empty();
  }

  private static Optional<MemberInfo> ownEntry(MemberSnapshot snapshot, long memberId) {
    if (!(snapshot.membership() instanceof Membership.Known known)) {
      return Optional.empty();
    }
    return known.own(memberId, snapshot.ownPeerUrls());
  }

  private static MemberState state(
      MemberSnapshot snapshot, LocalStatus status, Optional<MemberInfo> entry) {
    boolean listKnown = snapshot.membership() instanceof Membership.Known;
    boolean canIdentify =
        status != null || snapshot.rememberedMemberId() != 0 || !snapshot.ownPeerUrls().isEmpty();
    if (listKnown && canIdentify && entry.isEmpty()) {
      return MemberState.NOT_A_MEMBER;
    }
    if (status != null) {
      return status.learner() ? MemberState.LEARNER : MemberState.VOTER;
    }
    if (entry.isPresent() && !entry.get().started()) {
      return MemberState.NOT_STARTED;
    }
    // A silent member the list shows as a started learner is still a learner. A silent voter
    // stays Unknown: the voter check passes only on the local member's own word.
    if (entry.isPresent() && entry.get().learner()) {
      return MemberState.LEARNER;
    }
    return MemberState.UNKNOWN;
  }

  private static String stateDetail(MemberState state, LocalObservation local) {
    return switch (state) {
      case VOTER -> "a started voting member";
      case LEARNER ->
          local instanceof LocalObservation.Answered
              ? "a started learner (non-voting)"
              : "the member list shows a started learner; the local member did not answer";
      case NOT_STARTED ->
          local instanceof LocalObservation.TimedOut
              ? "a learner that is catching up: its client port accepts but does not serve yet"
              : "in the member list but not started yet";
      case NOT_A_MEMBER -> "not in the cluster's member list";
      case UNKNOWN -> "the local member did not answer and the member list does not tell";
    };
  }

  private static OptionalLong lag(LocalStatus status, LeaderObservation leader) {
    if (status == null || !(leader instanceof LeaderObservation.Answered l)) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(Math.max(0, l.raftIndex() - status.raftAppliedIndex()));
  }

  /** The {@code serving} check for this answer (or silence) of a member in this state. */
  public static Check serving(LocalObservation local, MemberState state) {
    String name = CheckNames.SERVING;
    if (local instanceof LocalObservation.Answered) {
      return Check.pass(name, "Serving", "the local member answered Status in this poll");
    }
    if (state == MemberState.NOT_STARTED) {
      String reason = local instanceof LocalObservation.TimedOut ? "CatchingUp" : "NotStarted";
      return Check.fail(name, reason, "the local learner is not serving yet: " + local.detail());
    }
    if (local instanceof LocalObservation.TimedOut) {
      return Check.fail(name, "Timeout", "the local member did not answer: " + local.detail());
    }
    if (local instanceof LocalObservation.Refused) {
      return Check.fail(
          name, "Unreachable", "the local member is not listening: " + local.detail());
    }
    if (local instanceof LocalObservation.Denied d) {
      return Check.fail(
          name, d.failure().reason(), "etcd refused the agent's Status: " + d.detail());
    }
    return Check.fail(name, "Error", "the local member's answer failed: " + local.detail());
  }

  private static Check member(
      Membership membership, Optional<MemberInfo> entry, MemberState state) {
    String name = CheckNames.MEMBER;
    if (membership instanceof Membership.Unknown u) {
      return u.failure().denial()
          ? Check.fail(
              name, u.failure().reason(), "etcd refused the agent's MemberList: " + u.reason())
          : Check.fail(
              name, "MembershipUnknown", "the member list could not be read: " + u.reason());
    }
    if (entry.isPresent()) {
      return Check.pass(
          name,
          "Member",
          "member " + Long.toHexString(entry.get().id()) + " is in the member list");
    }
    return state == MemberState.NOT_A_MEMBER
        ? Check.fail(name, "NotAMember", "this member is not in the member list")
        : Check.fail(name, "Unknown", "this member cannot be identified while it does not answer");
  }

  private static Check voter(MemberState state) {
    String name = CheckNames.VOTER;
    return state == MemberState.VOTER
        ? Check.pass(name, state.reason(), "a voting member")
        : Check.fail(name, state.reason(), "not a started voting member: " + state.reason());
  }

  private static Check leader(LocalStatus status) {
    String name = CheckNames.LEADER;
    if (status == null) {
      return Check.fail(name, "Unknown", "the local member did not answer");
    }
    return status.hasLeader()
        ? Check.pass(name, "LeaderKnown", "leader " + Long.toHexString(status.leaderId()))
        : Check.fail(name, "NoLeader", "the local member knows no leader");
  }

  private Check inSync(LocalStatus status, LeaderObservation leader, OptionalLong lag) {
    String name = CheckNames.IN_SYNC;
    if (status == null) {
      return Check.fail(name, "Unknown", "the local member did not answer");
    }
    if (lag.isEmpty()) {
      String why =
          leader instanceof LeaderObservation.Unavailable u ? u.reason() : "no leader status";
      return Check.fail(name, "LeaderUnknown", "lag unknown: " + why);
    }
    long value = lag.getAsLong();
    long max = policy.maxLagEntries();
    return value <= max
        ? Check.pass(name, "InSync", "lag " + value + " <= " + max)
        : Check.fail(name, "Lagging", "lag " + value + " > " + max);
  }

  private Check alarms(LocalStatus status, boolean listed, List<Alarm> alarms, long memberId) {
    String name = CheckNames.ALARMS;
    List<String> own =
        alarms.stream().filter(a -> a.memberId() == memberId).map(Alarm::type).distinct().toList();
    if (status == null && !listed) {
      return Check.fail(name, "Unknown", "the local member did not answer");
    }
    if (own.contains("CORRUPT")) {
      return Check.fail(name, "Corrupt", "alarm raised for this member: " + String.join(", ", own));
    }
    if (status == null) {
      return Check.fail(
          name,
          "Unknown",
          "the local member did not answer; the cluster's alarm list shows "
              + (own.isEmpty() ? "no alarm" : String.join(", ", own))
              + " for it");
    }
    if (own.isEmpty()) {
      return Check.pass(name, "NoAlarm", "no alarm raised for this member");
    }
    if (own.equals(List.of("NOSPACE")) && !policy.noSpaceFailsReadiness()) {
      return Check.pass(
          name,
          "NoSpace",
          "NOSPACE raised for this member: writes fail, reads still work"
              + " (not gating: --nospace-fails-readiness=false)");
    }
    String reason = own.contains("NOSPACE") ? "NoSpace" : "Alarm";
    return Check.fail(name, reason, "alarm raised for this member: " + String.join(", ", own));
  }
}
