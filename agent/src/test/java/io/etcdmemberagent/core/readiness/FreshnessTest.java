package io.etcdmemberagent.core.readiness;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Check;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class FreshnessTest {
  static final Instant T = Instant.parse("2026-12-02T10:00:00Z");

  @Test
  void aVerdictOlderThanTheBoundIsStale() {
    assertThat(Freshness.check(T, T.plusMillis(4000), Duration.ofSeconds(4)).passed()).isTrue();
    Check stale = Freshness.check(T, T.plusMillis(4001), Duration.ofSeconds(4));
    assertThat(stale.passed()).isFalse();
    assertThat(stale.reason()).isEqualTo("Stale");
  }
}
