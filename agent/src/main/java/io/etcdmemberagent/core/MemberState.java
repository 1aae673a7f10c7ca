package io.etcdmemberagent.core;

/** Where this member stands in the cluster; the reason of the {@code voting-member} condition. */
public enum MemberState {
  /** A started voting member. */
  VOTER("Voter"),
  /** A started learner: serves Status and serializable reads only. */
  LEARNER("Learner"),
  /** In the member list but not started yet (a learner still receiving its snapshot). */
  NOT_STARTED("NotStarted"),
  /** Not (or no longer) in the member list. */
  NOT_A_MEMBER("NotAMember"),
  /** Nothing reliable is known this poll. */
  UNKNOWN("Unknown");

  private final String reason;

  MemberState(String reason) {
    this.reason = reason;
  }

  public String reason() {
    return reason;
  }
}
