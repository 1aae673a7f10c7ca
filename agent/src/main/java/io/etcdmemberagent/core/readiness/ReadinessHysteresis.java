package io.etcdmemberagent.core.readiness;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;

/**
 * Readiness with hysteresis on the way up only: a verdict whose checks all pass is held back (one
 * more failed check, {@code settling}) until that many polls in a row have passed, counting from
 * the start or from the last failed poll. A failed poll is reported at once, so a member that
 * hiccups is kept out of the load balancer instead of flapping, and never reported ready sooner.
 */
public final class ReadinessHysteresis {

  private final int successThreshold;
  private int healthyInARow;

  public ReadinessHysteresis(int successThreshold) {
    if (successThreshold < 1) {
      throw new IllegalArgumentException(
          "successThreshold must be at least 1: " + successThreshold);
    }
    this.successThreshold = successThreshold;
  }

  public Verdict apply(Verdict verdict) {
    if (!verdict.ready()) {
      healthyInARow = 0;
      return verdict;
    }
    healthyInARow = Math.min(healthyInARow + 1, successThreshold);
    if (healthyInARow >= successThreshold) {
      return verdict;
    }
    // the message names no count, so the ready condition is patched once, not on every poll
    return verdict.withCheck(
        Check.fail(
            CheckNames.SETTLING,
            "Settling",
            "every check passes; ready after "
                + successThreshold
                + " healthy polls in a row (--ready-success-threshold)"));
  }
}
