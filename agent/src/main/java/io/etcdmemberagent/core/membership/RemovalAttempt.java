package io.etcdmemberagent.core.membership;

import java.time.Instant;

/**
 * One act of the scale-down rule: a {@code MemberRemove} or a {@code MoveLeader}, on which path
 * ({@link ScaleDownRule#FAST_PATH} or {@link ScaleDownRule#CATCH_UP_PATH}), and etcd's answer:
 * {@code result} is {@code removed}, {@code already-removed} (harmless: another path was first),
 * {@code leader-moved} or {@code failed}.
 */
public record RemovalAttempt(
    Instant at,
    String action,
    long memberId,
    String pod,
    String path,
    String result,
    String detail) {

  public boolean removedOrGone() {
    return result.equals("removed") || result.equals("already-removed");
  }
}
