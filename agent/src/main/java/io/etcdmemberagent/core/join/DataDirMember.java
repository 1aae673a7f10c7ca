package io.etcdmemberagent.core.join;

/** What the data dir says about the member it holds, read from its write-ahead log. */
public sealed interface DataDirMember {

  /** No {@code member/} directory: a fresh volume. */
  record Empty() implements DataDirMember {}

  /** The member and cluster ids of the WAL's metadata record. */
  record Identified(long memberId, long clusterId) implements DataDirMember {}

  /** A member directory whose ids could not be read ({@code why}): etcd decides at its start. */
  record Unreadable(String why) implements DataDirMember {}
}
