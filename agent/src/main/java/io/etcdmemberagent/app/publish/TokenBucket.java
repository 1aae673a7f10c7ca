package io.etcdmemberagent.app.publish;

import java.time.Duration;

/** A client-side rate limit: {@code burst} writes at once, then one per {@code every}. */
final class TokenBucket {

  private final int burst;
  private final long everyNanos;
  private double tokens;
  private long updatedNanos;
  private boolean started;

  TokenBucket(int burst, Duration every) {
    this.burst = burst;
    this.everyNanos = every.toNanos();
    this.tokens = burst;
  }

  /** Takes a token and returns zero, or returns how long until one is available. */
  synchronized Duration take(long nowNanos) {
    if (!started) {
      updatedNanos = nowNanos;
      started = true;
    }
    tokens = Math.min(burst, tokens + (double) (nowNanos - updatedNanos) / everyNanos);
    updatedNanos = nowNanos;
    if (tokens >= 1) {
      tokens -= 1;
      return Duration.ZERO;
    }
    return Duration.ofNanos((long) ((1 - tokens) * everyNanos) + 1);
  }
}
