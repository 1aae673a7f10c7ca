package io.etcdmemberagent.core;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Everything one poll learned about this member. Before the local member has ever answered {@code
 * Status} (a learner that has not started), it is found in the member list by {@code ownPeerUrls};
 * after it has, by {@code rememberedMemberId} (0 when none).
 */
public record MemberSnapshot(
    Instant takenAt,
    LocalObservation local,
    Membership membership,
    LeaderObservation leader,
    List<String> ownPeerUrls,
    long rememberedMemberId,
    Optional<DiskFacts> disk) {

  public MemberSnapshot {
    ownPeerUrls = List.copyOf(ownPeerUrls);
  }

  /** A snapshot without disk facts (no {@code --data-dir}). */
  public MemberSnapshot(
      Instant takenAt,
      LocalObservation local,
      Membership membership,
      LeaderObservation leader,
      List<String> ownPeerUrls,
      long rememberedMemberId) {
    this(takenAt, local, membership, leader, ownPeerUrls, rememberedMemberId, Optional.empty());
  }
}
