package io.etcdmemberagent.core;

import java.util.List;

/** One entry of the cluster's member list. */
public record MemberInfo(
    long id, String name, List<String> peerUrls, List<String> clientUrls, boolean learner) {

  public MemberInfo {
    peerUrls = List.copyOf(peerUrls);
    clientUrls = List.copyOf(clientUrls);
  }

  /**
   * etcd publishes a member's name and client URLs only once the member has started and applied its
   * own publish entry; until then both are empty.
   */
  public boolean started() {
    return !name.isEmpty();
  }

  public boolean sharesPeerUrlWith(List<String> urls) {
    return peerUrls.stream().anyMatch(urls::contains);
  }
}
