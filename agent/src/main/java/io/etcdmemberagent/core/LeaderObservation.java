package io.etcdmemberagent.core;

/** The leader's {@code Status} as read in one poll, or why it is not available. */
public sealed interface LeaderObservation {

  /** The leader answered; {@code raftIndex} is its committed index. */
  record Answered(long leaderId, long raftIndex) implements LeaderObservation {}

  /** No leader is known, its client URL is unknown, or it did not answer. */
  record Unavailable(String reason) implements LeaderObservation {}
}
