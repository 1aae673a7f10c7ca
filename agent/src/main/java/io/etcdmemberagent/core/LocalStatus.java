package io.etcdmemberagent.core;

import java.util.List;

/** What the local member said about itself in answer to {@code Status}. */
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
    List<String> errors) {

  public LocalStatus {
    errors = List.copyOf(errors);
  }

  public boolean hasLeader() {
    return leaderId != 0;
  }

  public boolean isLeader() {
    return hasLeader() && leaderId == memberId;
  }
}
