package io.etcdmemberagent.core.promotion;

/** What the promotion rule says after one poll. */
public sealed interface PromotionDecision {

  /** Promote this member now. */
  record Promote(long memberId, long lag) implements PromotionDecision {}

  /** The rule does not hold (yet); {@code reason} names the first part that fails. */
  record Hold(String reason, String message) implements PromotionDecision {}

  /** Nothing to promote: the local member is not a learner. */
  record NotALearner(String state) implements PromotionDecision {}

  /** The rule holds but {@code --promote=false}: an operator promotes. */
  record ObserveOnly(long memberId, long lag) implements PromotionDecision {}

  /** A recent refusal: wait until the backoff ends. */
  record BackingOff(java.time.Instant until, String lastResult) implements PromotionDecision {}
}
