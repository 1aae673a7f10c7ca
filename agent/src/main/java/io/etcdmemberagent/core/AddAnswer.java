package io.etcdmemberagent.core;

/** What etcd said to one {@code MemberAdd}. */
public sealed interface AddAnswer {

  record Added(MemberInfo member, Membership.Known members) implements AddAnswer {}

  record Error(String code, String message) implements AddAnswer {}
}
