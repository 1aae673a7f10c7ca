package io.etcdmemberagent.app;

import io.etcdmemberagent.core.Alarm;
import io.etcdmemberagent.core.DiskFacts;
import io.etcdmemberagent.core.EtcdGateway;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.MemberSnapshot;
import io.etcdmemberagent.core.Membership;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Makes one poll's etcd calls: local Status, the member list through a voter, and the leader's
 * Status through its client URL (skipped when the local member leads); the alarm list through a
 * voter only when the local member is silent. Adds the disk and peer-TLS facts. Remembers the last
 * member list and the local member id between polls; nothing else.
 */
final class SnapshotCollector {

  private final EtcdGateway etcd;
  private final Clock clock;
  private final String localEndpoint;
  private final MembershipReader membershipReader;
  private final List<String> ownPeerUrls;
  private final Optional<Supplier<DiskFacts>> disk;
  private final PeerTlsMonitor peerTls;
  private Membership lastKnown = new Membership.Unknown("not read yet");
  private long rememberedMemberId;

  SnapshotCollector(
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

  MemberSnapshot collect() {
    Instant takenAt = clock.instant();
    LocalObservation answered = etcd.status(localEndpoint);
    LocalStatus status = answered instanceof LocalObservation.Answered a ? a.status() : null;
    if (status != null) {
      rememberedMemberId = status.memberId();
    }
    Membership membership = membership(answered);
    if (membership instanceof Membership.Known) {
      lastKnown = membership;
    }
    LocalObservation local = stillAnswering(answered, membership);
    LeaderObservation leader = readLeader(status);
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

  private LeaderObservation readLeader(LocalStatus status) {
    if (status == null) {
      return new LeaderObservation.Unavailable("the local member did not answer");
    }
    if (!status.hasLeader()) {
      return new LeaderObservation.Unavailable("no leader");
    }
    if (status.isLeader()) {
      return new LeaderObservation.Answered(status.leaderId(), status.raftIndex());
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
        return new LeaderObservation.Answered(status.leaderId(), a.status().raftIndex());
      }
      reasons.add(answer.detail());
    }
    return new LeaderObservation.Unavailable(
        "leader did not answer: " + String.join("; ", reasons));
  }
}
