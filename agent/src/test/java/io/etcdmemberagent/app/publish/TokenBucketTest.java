package io.etcdmemberagent.app.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TokenBucketTest {

  static final long S = 1_000_000_000L;

  @Test
  void aBurstThenOneASecond() {
    TokenBucket bucket = new TokenBucket(5, Duration.ofSeconds(1));
    for (int i = 0; i < 5; i++) {
      assertThat(bucket.take(0)).as("burst token %d", i).isZero();
    }
    Duration wait = bucket.take(0);
    assertThat(wait).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(1).plusNanos(1));
    assertThat(bucket.take(S / 2)).as("half a second later: still empty").isPositive();
    assertThat(bucket.take(S)).as("a second later: one token").isZero();
    assertThat(bucket.take(S)).isPositive();
    assertThat(bucket.take(100 * S)).as("refills to the burst, not beyond").isZero();
    for (int i = 0; i < 4; i++) {
      assertThat(bucket.take(100 * S)).isZero();
    }
    assertThat(bucket.take(100 * S)).isPositive();
  }
}
