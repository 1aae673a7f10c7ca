package io.etcdmemberagent.core;

/** The thresholds the decision core applies. */
public record ReadinessPolicy(long maxLagEntries) {

  public ReadinessPolicy {
    if (maxLagEntries < 0) {
      throw new IllegalArgumentException("maxLagEntries must not be negative: " + maxLagEntries);
    }
  }
}
