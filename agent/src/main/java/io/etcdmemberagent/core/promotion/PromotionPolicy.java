package io.etcdmemberagent.core.promotion;

import java.time.Duration;

/**
 * Our promotion rule's knobs. {@code stablePolls}: how many consecutive polls the lag must be
 * within {@code maxLagEntries}; backoff after etcd refuses a not-in-sync learner grows from {@code
 * initialBackoff} to {@code maxBackoff}, with jitter.
 */
public record PromotionPolicy(
    boolean enabled,
    long maxLagEntries,
    int stablePolls,
    Duration initialBackoff,
    Duration maxBackoff,
    Duration stallTimeout) {

  public PromotionPolicy {
    if (stablePolls < 1) {
      throw new IllegalArgumentException("stablePolls must be at least 1: " + stablePolls);
    }
  }
}
