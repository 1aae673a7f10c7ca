package io.etcdmemberagent.core;

import java.util.List;

/** The readiness check names, as served under {@code /readyz/<check>}. */
public final class CheckNames {
  public static final String SERVING = "serving";
  public static final String MEMBER = "member";
  public static final String VOTER = "voter";
  public static final String LEADER = "leader";
  public static final String IN_SYNC = "in-sync";
  public static final String ALARMS = "alarms";

  public static final String DISK = "disk";
  public static final String PEER_TLS = "peer-tls";

  /** Fails while readiness is held back after a failure (--ready-success-threshold). */
  public static final String SETTLING = "settling";

  /** The checks that always gate readiness. */
  public static final List<String> ALL = List.of(SERVING, MEMBER, VOTER, LEADER, IN_SYNC, ALARMS);

  /** The checks that gate readiness only when configured to. */
  public static final List<String> OPTIONAL = List.of(DISK, PEER_TLS);

  private CheckNames() {}
}
