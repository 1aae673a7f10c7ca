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

  public static final List<String> ALL = List.of(SERVING, MEMBER, VOTER, LEADER, IN_SYNC, ALARMS);

  private CheckNames() {}
}
