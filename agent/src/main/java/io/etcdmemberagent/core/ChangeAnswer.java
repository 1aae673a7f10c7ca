package io.etcdmemberagent.core;

/** What etcd said to a membership change ({@code MemberPromote}, {@code MemberRemove}). */
public sealed interface ChangeAnswer {

  record Accepted() implements ChangeAnswer {}

  /** gRPC status code name and etcd's message; the call may or may not have been applied. */
  record Error(String code, String message) implements ChangeAnswer {}
}
