package io.etcdmemberagent.core.promotion;

import io.etcdmemberagent.core.CallFailure;
import io.etcdmemberagent.core.ChangeAnswer;

/** The settled outcome of one promotion attempt, after re-reading the member list on error. */
public enum PromoteResult {
  /** etcd accepted the promote. */
  PROMOTED("promoted"),
  /** The call failed, but the member list shows this member as a voter: success. */
  ALREADY_VOTER("already_voter"),
  /** etcd's own check refused: the learner is not in sync by etcd's 90% rule. Back off. */
  NOT_IN_SYNC("not_in_sync"),
  /** The member is no longer in the member list: it was removed. Never retried blindly. */
  NOT_FOUND("not_found"),
  /**
   * etcd refused the caller: a wrong password, or a user without the root role (MemberPromote needs
   * root). Backed off like any refusal; a person must fix the credentials.
   */
  DENIED("denied"),
  /**
   * Not sent: this member's Pod is surplus or the StatefulSet is paused at 0, so it is leaving; a
   * learner leaves for free, a voter would have to be removed while its etcd stops. Asked again
   * after the backoff (a second scale may want it again).
   */
  LEAVING("leaving"),
  /** Anything else, including ambiguous failures (deadline, unavailable, leader change). */
  FAILED("failed");

  private final String label;

  PromoteResult(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }

  public boolean success() {
    return this == PROMOTED || this == ALREADY_VOTER;
  }

  /**
   * Classifies an error of {@code MemberPromote} when the member list, re-read afterwards, still
   * shows this member as a learner (or could not be read).
   */
  public static PromoteResult ofError(ChangeAnswer.Error error) {
    String message = error.message() == null ? "" : error.message();
    // Whole texts: "can only promote a learner member" (the member is a voter already) is a
    // prefix of the not-in-sync text.
    if (message.endsWith(NOT_IN_SYNC_TEXT)) {
      return NOT_IN_SYNC;
    }
    if (message.endsWith(NOT_A_LEARNER_TEXT)) {
      return ALREADY_VOTER;
    }
    if (message.endsWith("etcdserver: member not found") || error.code().equals("NOT_FOUND")) {
      return NOT_FOUND;
    }
    return CallFailure.classify(error.code(), message).denial() ? DENIED : FAILED;
  }

  static final String NOT_IN_SYNC_TEXT =
      "etcdserver: can only promote a learner member which is in sync with leader";
  static final String NOT_A_LEARNER_TEXT = "etcdserver: can only promote a learner member";
}
