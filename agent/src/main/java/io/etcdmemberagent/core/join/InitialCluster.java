package io.etcdmemberagent.core.join;

import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds {@code ETCD_INITIAL_CLUSTER} for a member joining an existing cluster. etcd compares the
 * peer URLs of every member with the cluster's, so every member must be listed, also other members
 * that have not started (and so have no name yet): they get a placeholder name.
 */
public final class InitialCluster {

  private InitialCluster() {}

  public static String forJoin(Membership.Known members, String selfName, List<String> selfPeers) {
    List<String> entries = new ArrayList<>();
    for (MemberInfo m : members.members()) {
      String name;
      if (m.sharesPeerUrlWith(selfPeers)) {
        name = selfName;
      } else if (m.started()) {
        name = m.name();
      } else {
        name = "unstarted-" + Long.toHexString(m.id());
      }
      for (String peer : m.peerUrls()) {
        entries.add(name + "=" + peer);
      }
    }
    return String.join(",", entries);
  }

  public static String forSelf(String selfName, List<String> selfPeers) {
    return String.join(",", selfPeers.stream().map(p -> selfName + "=" + p).toList());
  }
}
