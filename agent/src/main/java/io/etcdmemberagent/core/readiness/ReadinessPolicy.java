package io.etcdmemberagent.core.readiness;

/**
 * The thresholds the decision core applies: the lag limit, whether a NOSPACE alarm makes the member
 * not ready (reads still work on it; CORRUPT always does), and how many healthy polls in a row it
 * takes to be ready again after a failed one (failing is always immediate).
 */
public record ReadinessPolicy(
    long maxLagEntries, boolean noSpaceFailsReadiness, int successThreshold) {

  public ReadinessPolicy {
    if (maxLagEntries < 0) {
      throw new IllegalArgumentException("maxLagEntries must not be negative: " + maxLagEntries);
    }
    if (successThreshold < 1) {
      throw new IllegalArgumentException(
          "successThreshold must be at least 1: " + successThreshold);
    }
  }

  public ReadinessPolicy(long maxLagEntries, boolean noSpaceFailsReadiness) {
    this(maxLagEntries, noSpaceFailsReadiness, 1);
  }

  public ReadinessPolicy(long maxLagEntries) {
    this(maxLagEntries, false);
  }
}
