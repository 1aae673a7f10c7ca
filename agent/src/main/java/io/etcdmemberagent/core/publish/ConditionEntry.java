package io.etcdmemberagent.core.publish;

import java.time.Instant;

/**
 * One of our Pod conditions as written to the API: every field we own, always sent together (a
 * strategic merge keeps a left-out field's old value).
 */
public record ConditionEntry(
    String name,
    ConditionStatus status,
    String reason,
    String message,
    Instant lastTransitionTime) {

  boolean sameAs(PodCondition c) {
    return status == c.status() && reason.equals(c.reason()) && message.equals(c.message());
  }
}
