package io.etcdmemberagent.core;

/**
 * The thresholds the decision core applies: the lag limit, and whether a NOSPACE alarm makes the
 * member not ready (reads still work on it; CORRUPT always does).
 */
public record ReadinessPolicy(long maxLagEntries, boolean noSpaceFailsReadiness) {

  public ReadinessPolicy {
    if (maxLagEntries < 0) {
      throw new IllegalArgumentException("maxLagEntries must not be negative: " + maxLagEntries);
    }
  }

  public ReadinessPolicy(long maxLagEntries) {
    this(maxLagEntries, false);
  }
}
