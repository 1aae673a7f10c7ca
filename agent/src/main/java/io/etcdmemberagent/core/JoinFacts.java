package io.etcdmemberagent.core;

import java.time.Duration;
import java.util.List;

/**
 * What {@code join} knows when it decides: this member's name and peer URLs, whether its data dir
 * already holds a member, the member list (or why none), whether it may bootstrap, how long it has
 * found no cluster, and whether a lost member may be replaced.
 */
public record JoinFacts(
    String name,
    List<String> peerUrls,
    boolean dataDirHasMember,
    Membership membership,
    boolean bootstrapMember,
    Duration noClusterFor,
    Duration bootstrapWait,
    boolean replaceLostMember) {

  public JoinFacts {
    peerUrls = List.copyOf(peerUrls);
  }
}
