package io.etcdmemberagent.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/** Turns one {@link MemberSnapshot} into a {@link Verdict}. Pure: no I/O, no clock. */
public final class MemberEvaluator {

  private final ReadinessPolicy policy;
  private final Optional<DiskEvaluator> disk;

  public MemberEvaluator(ReadinessPolicy policy) {
    this(policy, Optional.empty());
  }

  /** With a disk evaluator: the {@code disk} check (a readiness check when it gates). */
  public MemberEvaluator(ReadinessPolicy policy, Optional<DiskEvaluator> disk) {
    this.policy = policy;
    this.disk = disk;
  }

  public Verdict evaluate(MemberSnapshot snapshot) {
    LocalStatus status = answered(snapshot.local()).orElse(null);
    long memberId = status != null ? status.memberId() : snapshot.rememberedMemberId();
    Optional<MemberInfo> entry = ownEntry(snapshot, memberId);
    MemberState state = state(snapshot, status, entry);
    OptionalLong lag = lag(status, snapshot.leader());
    List<Alarm> alarms = status == null ? List.of() : Alarm.parseAll(status.errors());

    List<Check> checks = new ArrayList<>();
    checks.add(serving(snapshot.local(), state));
    checks.add(member(snapshot.membership(), entry, state));
    checks.add(voter(state));
    checks.add(leader(status));
    checks.add(inSync(status, snapshot.leader(), lag));
    checks.add(alarms(status, alarms, memberId));
    Optional<Check> diskCheck = diskCheck(snapshot, status);
    if (diskCheck.isPresent() && disk.get().policy().gatesReadiness()) {
      checks.add(diskCheck.get());
    }
    return new Verdict(
        snapshot.takenAt(),
        state,
        stateDetail(state, snapshot.local()),
        memberId,
        lag,
        checks,
        alarms,
        diskCheck);
  }

  private Optional<Check> diskCheck(MemberSnapshot snapshot, LocalStatus status) {
    if (disk.isEmpty() || snapshot.disk().isEmpty()) {
      return Optional.empty();
    }
    long dbSize = status == null ? -1 : status.dbSize();
    return Optional.of(disk.get().check(snapshot.disk().get(), dbSize));
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
    Optional<MemberInfo> byId = memberId != 0 ? known.byId(memberId) : Optional.empty();
    return byId.isPresent() ? byId : known.byPeerUrls(snapshot.ownPeerUrls());
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

  private static Check serving(LocalObservation local, MemberState state) {
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
    return Check.fail(name, "Error", "the local member's answer failed: " + local.detail());
  }

  private static Check member(
      Membership membership, Optional<MemberInfo> entry, MemberState state) {
    String name = CheckNames.MEMBER;
    if (membership instanceof Membership.Unknown u) {
      return Check.fail(
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

  private static Check alarms(LocalStatus status, List<Alarm> alarms, long memberId) {
    String name = CheckNames.ALARMS;
    if (status == null) {
      return Check.fail(name, "Unknown", "the local member did not answer");
    }
    List<String> own =
        alarms.stream().filter(a -> a.memberId() == memberId).map(Alarm::type).distinct().toList();
    if (own.isEmpty()) {
      return Check.pass(name, "NoAlarm", "no alarm raised for this member");
    }
    String reason =
        own.contains("CORRUPT") ? "Corrupt" : own.contains("NOSPACE") ? "NoSpace" : "Alarm";
    return Check.fail(name, reason, "alarm raised for this member: " + String.join(", ", own));
  }
}
