package io.etcdmemberagent.core.join;

import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.membership.ScaleTarget;
import java.time.Duration;
import java.util.List;

/**
 * What {@code join} knows when it decides: this member's name and peer URLs, the member its data
 * dir holds (if any), the member list (or why none), whether it may bootstrap, how long it has
 * found no cluster, whether a lost member may be replaced, and the StatefulSet's size (whether this
 * member's ordinal is surplus).
 */
public record JoinFacts(
    String name,
    List<String> peerUrls,
    DataDirMember dataDir,
    Membership membership,
    boolean bootstrapMember,
    Duration noClusterFor,
    Duration bootstrapWait,
    boolean replaceLostMember,
    ScaleTarget target) {

  public JoinFacts {
    peerUrls = List.copyOf(peerUrls);
  }

  public boolean dataDirHasMember() {
    return !(dataDir instanceof DataDirMember.Empty);
  }
}
