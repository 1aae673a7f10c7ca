package io.etcdmemberagent.core.membership;

/** What the scale-down rule knows of a surplus member's Pod. */
public enum SurplusPod {

  /**
   * Present and not terminating: the member is not leaving yet (OrderedReady deletes one Pod at a
   * time; the controller may not have reached it). Never removed while so.
   */
  RUNNING,

  /**
   * Terminating, or not readable now (never act on a doubt): its own agent holds its etcd and
   * removes its member.
   */
  TERMINATING,

  /**
   * Absent, or past its deletion deadline: no agent of its own acts any more and its etcd has
   * stopped or is about to; another agent removes its member.
   */
  GONE
}
