package io.etcdmemberagent.core.disk;

/**
 * What reading the two meta pages of etcd's backend file ({@code member/snap/db}, a bbolt file)
 * found. The agent only reads the file; it never repairs or deletes it.
 */
public sealed interface DbFileState {

  /** At least one meta page has bbolt's magic, version and a matching checksum. */
  record Valid() implements DbFileState {}

  /** No db file yet (a member that has not started, or a fresh data dir). */
  record Missing() implements DbFileState {}

  /** Neither meta page is valid: etcd cannot open this file and will not start on it. */
  record Corrupt(String detail) implements DbFileState {}

  /** The file exists but could not be read. */
  record Unreadable(String detail) implements DbFileState {}
}
