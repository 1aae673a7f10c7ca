package io.etcdmemberagent.core.publish;

import java.util.List;

/**
 * What an EtcdMember states that changes only on a transition (so a steady member writes nothing):
 * identity, role, readiness, leader and term, peer TLS, disk, alarms, versions. IDs are 0 and texts
 * empty where the agent does not know them.
 */
public record MemberFacts(
    long memberId,
    long clusterId,
    String name,
    List<String> peerUrls,
    List<String> clientUrls,
    MemberRole role,
    boolean ready,
    boolean learner,
    boolean started,
    long leaderId,
    long raftTerm,
    boolean peerTlsEnabled,
    String peerTls,
    boolean peerTlsValid,
    String disk,
    List<String> alarms,
    String etcdVersion,
    String storageVersion,
    String agentVersion) {

  public MemberFacts {
    peerUrls = List.copyOf(peerUrls);
    clientUrls = List.copyOf(clientUrls);
    alarms = List.copyOf(alarms);
  }
}
