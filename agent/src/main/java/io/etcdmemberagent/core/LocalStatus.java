package io.etcdmemberagent.core;

import java.util.List;

/**
 * What the local member said about itself in answer to {@code Status}. {@code storageVersion},
 * {@code dbSizeQuota} and {@code downgrade} come from etcd 3.6 on: empty, 0 and {@link
 * DowngradeState#NONE} from older members. {@code clusterId} is from the answer's header (0 when
 * not known).
 */
public record LocalStatus(
    long memberId,
    long leaderId,
    long raftIndex,
    long raftAppliedIndex,
    long raftTerm,
    long dbSize,
    long dbSizeInUse,
    boolean learner,
    String version,
    List<String> errors,
    String storageVersion,
    long dbSizeQuota,
    DowngradeState downgrade,
    long clusterId) {

  public LocalStatus {
    errors = List.copyOf(errors);
  }

  /** A member before 3.6: no storage version, quota or downgrade state in its answer. */
  public LocalStatus(
      long memberId,
      long leaderId,
      long raftIndex,
      long raftAppliedIndex,
      long raftTerm,
      long dbSize,
      long dbSizeInUse,
      boolean learner,
      String version,
      List<String> errors) {
    this(
        memberId,
        leaderId,
        raftIndex,
        raftAppliedIndex,
        raftTerm,
        dbSize,
        dbSizeInUse,
        learner,
        version,
        errors,
        "",
        0,
        DowngradeState.NONE,
        0);
  }

  public boolean hasLeader() {
    return leaderId != 0;
  }

  public boolean isLeader() {
    return hasLeader() && leaderId == memberId;
  }
}
