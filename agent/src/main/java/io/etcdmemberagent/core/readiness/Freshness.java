package io.etcdmemberagent.core.readiness;

import io.etcdmemberagent.core.Check;
import java.time.Duration;
import java.time.Instant;

/**
 * Readiness is served from the last poll; this check keeps an old verdict from being served as if
 * it were current when the loop itself is stuck.
 */
public final class Freshness {

  public static final String CHECK = "fresh";

  private Freshness() {}

  public static Check check(Instant decidedAt, Instant now, Duration maxAge) {
    Duration age = Duration.between(decidedAt, now);
    return age.compareTo(maxAge) <= 0
        ? Check.pass(CHECK, "Fresh", "last poll " + age.toMillis() + "ms ago")
        : Check.fail(
            CHECK,
            "Stale",
            "last poll " + age.toMillis() + "ms ago, more than " + maxAge.toMillis() + "ms");
  }
}
