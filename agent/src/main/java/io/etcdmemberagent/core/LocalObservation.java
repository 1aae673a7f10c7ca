package io.etcdmemberagent.core;

/** The outcome of asking the local member for its {@code Status} in one poll. */
public sealed interface LocalObservation {

  /** What happened, for messages. */
  String detail();

  /** The member answered within the deadline. */
  record Answered(LocalStatus status) implements LocalObservation {
    @Override
    public String detail() {
      return "answered";
    }
  }

  /**
   * Nothing listens on the client port (connection refused): etcd is not running, or is restarting.
   */
  record Refused(String detail) implements LocalObservation {}

  /**
   * The call hit its deadline: the process is hung (SIGSTOP, disk stall), or it is a learner that
   * has not started serving yet (etcd accepts connections but serves only after it has applied its
   * own publish entry).
   */
  record TimedOut(String detail) implements LocalObservation {}

  /**
   * etcd refused the caller: authentication failed or the user lacks the permission for {@code
   * Status}. A person must fix the credentials or the role; the member itself may be fine.
   */
  record Denied(CallFailure failure, String detail) implements LocalObservation {}

  /** Any other failure: TLS, a non-etcd server on the port, a malformed answer. */
  record Failed(String detail) implements LocalObservation {}
}
