package io.etcdmemberagent.core.join;

import io.etcdmemberagent.core.MemberInfo;

/** What {@code join} does next, decided from the data dir and the cluster's member list. */
public sealed interface JoinPlan {

  /** The data dir holds a member: etcd restarts from it; nothing to change in the cluster. */
  record RestartFromData() implements JoinPlan {}

  /**
   * The data dir's member was removed from the cluster (a scale-down) and the StatefulSet wants
   * this ordinal again: move the old data aside (never deleted) and join as a new learner.
   */
  record SetAsideRemovedData(long removedId) implements JoinPlan {}

  /** This member is already in the list (added before, not started yet): start with it. */
  record Reuse(MemberInfo self) implements JoinPlan {}

  /** Not a member yet: add it as a learner. */
  record AddLearner() implements JoinPlan {}

  /** Its volume was lost: remove this member (its own entry only) and add it as a learner. */
  record Replace(MemberInfo self) implements JoinPlan {}

  /** The designated bootstrap member starts a new one-member cluster. */
  record Bootstrap() implements JoinPlan {}

  /** Not yet: ask again after a while. */
  record Wait(String reason) implements JoinPlan {}

  /** Stop with this message; a person must act. */
  record Fail(String message) implements JoinPlan {}
}
