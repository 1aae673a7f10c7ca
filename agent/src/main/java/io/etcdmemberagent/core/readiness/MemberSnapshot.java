package io.etcdmemberagent.core.readiness;

import io.etcdmemberagent.core.Alarm;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.disk.DiskFacts;
import io.etcdmemberagent.core.tls.PeerTlsFacts;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Everything one poll learned about this member. Before the local member has ever answered {@code
 * Status} (a learner that has not started), it is found in the member list by {@code ownPeerUrls};
 * after it has, by {@code rememberedMemberId} (0 when none). {@code listedAlarms} is the cluster's
 * alarm list, read through a voter only when the local member did not answer.
 */
public record MemberSnapshot(
    Instant takenAt,
    LocalObservation local,
    Membership membership,
    LeaderObservation leader,
    List<String> ownPeerUrls,
    long rememberedMemberId,
    Optional<DiskFacts> disk,
    PeerTlsFacts peerTls,
    Optional<List<Alarm>> listedAlarms) {

  public MemberSnapshot {
    ownPeerUrls = List.copyOf(ownPeerUrls);
    listedAlarms = listedAlarms.map(List::copyOf);
  }

  /** A snapshot without disk facts (no {@code --data-dir}) and without peer-TLS facts. */
  public MemberSnapshot(
      Instant takenAt,
      LocalObservation local,
      Membership membership,
      LeaderObservation leader,
      List<String> ownPeerUrls,
      long rememberedMemberId) {
    this(takenAt, local, membership, leader, ownPeerUrls, rememberedMemberId, Optional.empty());
  }

  /** A snapshot without peer-TLS facts. */
  public MemberSnapshot(
      Instant takenAt,
      LocalObservation local,
      Membership membership,
      LeaderObservation leader,
      List<String> ownPeerUrls,
      long rememberedMemberId,
      Optional<DiskFacts> disk) {
    this(
        takenAt,
        local,
        membership,
        leader,
        ownPeerUrls,
        rememberedMemberId,
        disk,
        new PeerTlsFacts.Unknown("not probed"),
        Optional.empty());
  }
}
