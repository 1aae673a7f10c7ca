package io.etcdmemberagent.app.publish;

import io.etcdmemberagent.core.KubeAnswer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Jittered exponential backoff for API writers (500 ms doubling to 30 s), never shorter than the
 * server's Retry-After; after a failure no call is made before the wait is over, whatever wakes the
 * writer.
 */
final class ApiBackoff {

  static final Duration FIRST = Duration.ofMillis(500);
  static final Duration MAX = Duration.ofSeconds(30);

  private final Clock clock;
  private Duration next = FIRST;
  private Instant notBefore = Instant.MIN;

  ApiBackoff(Clock clock) {
    this.clock = clock;
  }

  /** How long to wait still, when a failure's backoff is not over yet. */
  Optional<Duration> holdOff() {
    Instant now = clock.instant();
    return now.isBefore(notBefore)
        ? Optional.of(Duration.between(now, notBefore))
        : Optional.empty();
  }

  /** The next wait after a failure: jittered, doubled for next time, at least Retry-After. */
  Duration after(Duration retryAfter) {
    long half = next.toMillis() / 2;
    Duration jittered = Duration.ofMillis(half + ThreadLocalRandom.current().nextLong(half + 1));
    Duration doubled = next.multipliedBy(2);
    next = doubled.compareTo(MAX) > 0 ? MAX : doubled;
    Duration wait = retryAfter.compareTo(jittered) > 0 ? retryAfter : jittered;
    notBefore = clock.instant().plus(wait);
    return wait;
  }

  /** The server's Retry-After in an answer (zero when it gave none). */
  static Duration retryAfter(KubeAnswer answer) {
    return answer instanceof KubeAnswer.Retry r ? r.after() : Duration.ZERO;
  }

  void reset() {
    next = FIRST;
  }
}
