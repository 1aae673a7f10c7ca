package io.etcdmemberagent.core;

/**
 * The etcd calls a poll makes, each bounded by the configured deadline. Implementations never throw
 * for etcd's answers: every outcome is a value.
 */
public interface EtcdGateway extends AutoCloseable {

  /** {@code Status} of the member behind one client URL. */
  LocalObservation status(String endpoint);

  /** {@code MemberList} through one client URL, which must belong to a voter. */
  Membership memberList(String endpoint);

  /**
   * {@code MemberList} with {@code linearizable: true} (etcd 3.5+): answered only once the member
   * has applied everything the leader committed before the call, so a lagging member's stale view
   * is never returned; it fails without a quorum. etcd 3.4 ignores the field and answers its local
   * view.
   */
  Membership linearizableMemberList(String endpoint);

  /**
   * {@code Alarm(GET)} through one client URL, which must belong to a voter: every member's alarms,
   * or empty when the call failed.
   */
  java.util.Optional<java.util.List<Alarm>> alarmList(String endpoint);

  /**
   * {@code MemberPromote} of one member through one client URL, which must belong to a voter (a
   * follower forwards it to the leader). Never retried here: promote is not idempotent.
   */
  ChangeAnswer promote(String endpoint, long memberId);

  /** {@code MemberAdd} of a learner with these peer URLs; the answer carries the new list. */
  AddAnswer addLearner(String endpoint, java.util.List<String> peerUrls);

  /**
   * {@code MemberRemove}: this member's own id ({@code join} replacing a lost volume), or a surplus
   * member by the scale-down rule. Removing an id no longer in the list answers an {@code Error}
   * with code {@code NOT_FOUND}: harmless.
   */
  ChangeAnswer removeMember(String endpoint, long memberId);

  /**
   * {@code MoveLeader} to {@code transfereeId}, sent to the leader's own client URL (a follower
   * answers that it is not the leader). Only for a surplus leader, by the scale-down rule.
   */
  ChangeAnswer moveLeader(String leaderEndpoint, long transfereeId);

  @Override
  void close();
}
