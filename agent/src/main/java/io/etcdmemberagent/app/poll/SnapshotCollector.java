package io.etcdmemberagent.app.poll;

import io.etcdmemberagent.app.membership.MembershipReader;
import io.etcdmemberagent.core.Alarm;
import io.etcdmemberagent.core.EtcdGateway;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.disk.DiskFacts;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Makes one poll's etcd calls: local Status, the member list through a voter, and the leader's
 * Status through its client URL (skipped when the local member leads); the alarm list through a
 * voter only when the local member is silent. Adds the disk and peer-TLS facts. Remembers the last
 * member list, the local member id and whether the local member answered the last poll; nothing
 * else.
 */
public final class SnapshotCollector {

  private final EtcdGateway etcd;
  private final Clock clock;
  private final String localEndpoint;
  private final MembershipReader membershipReader;
  private final List<String> ownPeerUrls;
  private final Optional<Supplier<DiskFacts>> disk;
  private final PeerTlsMonitor peerTls;
  private Membership lastKnown = new Membership.Unknown("not read yet");
  private long rememberedMemberId;
  private boolean answeredLastPoll;

  public SnapshotCollector(
      EtcdGateway etcd,
      MembershipReader membershipReader,
      Clock clock,
      String localEndpoint,
      List<String> ownPeerUrls,
      Optional<Supplier<DiskFacts>> disk,
      PeerTlsMonitor peerTls) {
    this.etcd = etcd;
    this.peerTls = peerTls;
    this.clock = clock;
    this.localEndpoint = localEndpoint;
    this.membershipReader = membershipReader;
    this.disk = disk;
    this.ownPeerUrls = List.copyOf(ownPeerUrls);
  }

  /**
   * One poll's snapshot. {@code silent} hears at once when the local member has not answered,
   * before the poll's other calls (the member list and alarms through other voters, each up to the
   * timeout) are made: readiness need not wait for them.
   */
  public MemberSnapshot collect(Consumer<LocalObservation> silent) {
    Instant takenAt = clock.instant();
    boolean backFromSilence = !answeredLastPoll;
    LocalObservation answered = etcd.status(localEndpoint);
    LocalStatus status = answered instanceof LocalObservation.Answered a ? a.status() : null;
    if (status != null) {
      rememberedMemberId = status.memberId();
    } else {
      silent.accept(answered);
    }
    Membership membership = membership(answered);
    if (membership instanceof Membership.Known) {
      lastKnown = membership;
    }
    LocalObservation local = stillAnswering(answered, membership);
    if (local != answered) {
      silent.accept(local);
    }
    answeredLastPoll = local instanceof LocalObservation.Answered;
    LeaderObservation leader = readLeader(status, backFromSilence);
    Optional<List<Alarm>> listedAlarms =
        status == null && membership instanceof Membership.Known known
            ? etcd.alarmList(known.readFrom())
            : Optional.empty();
    return new MemberSnapshot(
        takenAt,
        local,
        membership,
        leader,
        ownPeerUrls,
        rememberedMemberId,
        disk.map(Supplier::get),
        peerTls.facts(lastKnown, rememberedMemberId, ownPeerUrls),
        listedAlarms);
  }

  private Membership membership(LocalObservation local) {
    return membershipReader.read(local, lastKnown);
  }

  /**
   * A local voter is asked for the member list first, right after its Status. When it answered
   * Status but not that, it stopped answering during this poll (hung, dying, cut off): the poll
   * counts it as silent, so readiness does not wait for the next poll's timeout as well.
   */
  private LocalObservation stillAnswering(LocalObservation local, Membership membership) {
    boolean askedFirst = local instanceof LocalObservation.Answered a && !a.status().learner();
    boolean answeredList =
        membership instanceof Membership.Known known && known.readFrom().equals(localEndpoint);
    if (!askedFirst || answeredList) {
      return local;
    }
    return new LocalObservation.TimedOut(
        "answered Status, then not the member list in the same poll");
  }

  private LeaderObservation readLeader(LocalStatus status, boolean backFromSilence) {
    if (status == null) {
      return new LeaderObservation.Unavailable("the local member did not answer");
    }
    if (!status.hasLeader()) {
      return new LeaderObservation.Unavailable("no leader");
    }
    if (status.isLeader()) {
      return backFromSilence
          ? confirmLeadership(status)
          : new LeaderObservation.Answered(status.leaderId(), status.raftIndex());
    }
    Optional<MemberInfo> leader =
        lastKnown instanceof Membership.Known known
            ? known.byId(status.leaderId())
            : Optional.empty();
    if (leader.isEmpty() || leader.get().clientUrls().isEmpty()) {
      return new LeaderObservation.Unavailable(
          "client URL of leader " + Long.toHexString(status.leaderId()) + " unknown");
    }
    List<String> reasons = new ArrayList<>();
    for (String url : leader.get().clientUrls()) {
      LocalObservation answer = etcd.status(url);
      if (answer instanceof LocalObservation.Answered a) {
        return a.status().isLeader()
            ? new LeaderObservation.Answered(status.leaderId(), a.status().raftIndex())
            : new LeaderObservation.Unavailable(
                "member "
                    + Long.toHexString(status.leaderId())
                    + " no longer leads: "
                    + follows(a.status()));
      }
      reasons.add(answer.detail());
    }
    return new LeaderObservation.Unavailable(
        "leader did not answer: " + String.join("; ", reasons));
  }

  /**
   * A leader that was silent in the last poll (frozen, stalled, cut off) answers first from the
   * term it led before: the others may have elected a new leader meanwhile, and it steps down only
   * when it hears of that. Another voter's Status settles it; when none answers, its word stands.
   */
  private LeaderObservation confirmLeadership(LocalStatus status) {
    for (String url : otherVoters(status.memberId())) {
      if (etcd.status(url) instanceof LocalObservation.Answered a) {
        return a.status().leaderId() == status.memberId()
            ? new LeaderObservation.Answered(status.leaderId(), status.raftIndex())
            : new LeaderObservation.Unavailable(
                "this member answered as the leader of term "
                    + status.raftTerm()
                    + " right after it was silent, but "
                    + follows(a.status()));
      }
    }
    return new LeaderObservation.Answered(status.leaderId(), status.raftIndex());
  }

  /** Client URLs of other voters from the last member list, one per member, at most two. */
  private List<String> otherVoters(long self) {
    if (!(lastKnown instanceof Membership.Known known)) {
      return List.of();
    }
    return known.members().stream()
        .filter(m -> m.id() != self && !m.learner() && !m.clientUrls().isEmpty())
        .map(m -> m.clientUrls().get(0))
        .limit(2)
        .toList();
  }

  private static String follows(LocalStatus other) {
    String leader =
        other.hasLeader() ? "leader " + Long.toHexString(other.leaderId()) : "no leader";
    return "member "
        + Long.toHexString(other.memberId())
        + " follows "
        + leader
        + " in term "
        + other.raftTerm();
  }
}
