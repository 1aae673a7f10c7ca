package io.etcdmemberagent.core.publish;

import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.readiness.Verdict;

/** What an EtcdMember shows in its Role column: the member's place in the cluster this poll. */
public enum MemberRole {
  LEADER("Leader"),
  FOLLOWER("Follower"),
  LEARNER("Learner"),
  NOT_STARTED("NotStarted"),
  NOT_A_MEMBER("NotAMember"),
  UNKNOWN("Unknown");

  private final String text;

  MemberRole(String text) {
    this.text = text;
  }

  public String text() {
    return text;
  }

  public boolean voter() {
    return this == LEADER || this == FOLLOWER;
  }

  /** A voter leads when its own Status names itself as the leader; else it follows. */
  public static MemberRole of(Verdict verdict, LocalObservation local) {
    return switch (verdict.state()) {
      case VOTER ->
          local instanceof LocalObservation.Answered a && a.status().isLeader() ? LEADER : FOLLOWER;
      case LEARNER -> LEARNER;
      case NOT_STARTED -> NOT_STARTED;
      case NOT_A_MEMBER -> NOT_A_MEMBER;
      case UNKNOWN -> UNKNOWN;
    };
  }

  public static MemberRole parse(String text) {
    for (MemberRole r : values()) {
      if (r.text.equals(text)) {
        return r;
      }
    }
    return UNKNOWN;
  }
}
