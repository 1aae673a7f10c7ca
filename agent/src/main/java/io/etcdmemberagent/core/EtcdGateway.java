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

  @Override
  void close();
}
