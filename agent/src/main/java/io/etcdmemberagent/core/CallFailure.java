package io.etcdmemberagent.core;

/**
 * Why an etcd call failed, told from etcd's gRPC status code and its own text. The texts are the
 * same on 3.4 to 3.7; the codes are not (a learner's refusal is UNAVAILABLE before 3.6,
 * FAILED_PRECONDITION from 3.6), so refusals are classified by whole texts, never as unreachable.
 */
public enum CallFailure {
  /** Wrong or missing user name or password, or a token etcd no longer knows. */
  AUTHENTICATION_FAILED("AuthenticationFailed", "authentication_failed"),
  /** The authenticated user lacks the permission (e.g. not root for MemberAdd/MemberPromote). */
  PERMISSION_DENIED("PermissionDenied", "permission_denied"),
  /** The member asked is a learner, which serves only Status and serializable reads. */
  LEARNER_REJECTED("LearnerRejected", "learner_rejected"),
  /** Anything else: not listening, no answer in time, a leader change, a broken connection. */
  UNAVAILABLE("Unavailable", "unavailable");

  private final String reason;
  private final String label;

  CallFailure(String reason, String label) {
    this.reason = reason;
    this.label = label;
  }

  /** CamelCase, for check reasons. */
  public String reason() {
    return reason;
  }

  /** snake_case, for metric labels. */
  public String label() {
    return label;
  }

  /** An authentication or permission problem: a person must fix the credentials or the role. */
  public boolean denial() {
    return this == AUTHENTICATION_FAILED || this == PERMISSION_DENIED;
  }

  /** Classifies one failed call by its gRPC status code name and etcd's message. */
  public static CallFailure classify(String grpcCode, String message) {
    String text = message == null ? "" : message;
    if (text.endsWith("etcdserver: rpc not supported for learner")) {
      return LEARNER_REJECTED;
    }
    if ("UNAUTHENTICATED".equals(grpcCode)
        || text.endsWith("etcdserver: authentication failed, invalid user ID or password")
        || text.endsWith("etcdserver: invalid auth token")
        || text.endsWith("etcdserver: user name is empty")
        || text.endsWith("etcdserver: user name not found")) {
      return AUTHENTICATION_FAILED;
    }
    if ("PERMISSION_DENIED".equals(grpcCode) || text.endsWith("etcdserver: permission denied")) {
      return PERMISSION_DENIED;
    }
    return UNAVAILABLE;
  }
}
