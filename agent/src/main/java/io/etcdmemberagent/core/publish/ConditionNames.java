package io.etcdmemberagent.core.publish;

/** Short names of the Pod conditions the agent owns. */
public final class ConditionNames {
  public static final String READY = "ready";
  public static final String VOTING_MEMBER = "voting-member";
  public static final String IN_SYNC = "in-sync";
  public static final String ALARMS_CLEAR = "alarms-clear";
  public static final String PEER_TLS = "peer-tls";
  public static final String DISK_HEALTHY = "disk-healthy";
  public static final String MEMBERSHIP_SETTLED = "membership-settled";

  private ConditionNames() {}
}
