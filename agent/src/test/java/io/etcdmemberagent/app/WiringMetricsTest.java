package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcdmemberagent.metrics.MicrometerMetrics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class WiringMetricsTest {

  @Test
  void aScrapeBeforeTheRegistryExistsWaitsForIt() throws Exception {
    WiringMetrics scrapes = new WiringMetrics(Duration.ofSeconds(30));
    CompletableFuture<byte[]> early = CompletableFuture.supplyAsync(() -> scrapes.scrape(null));
    assertThat(early).isNotDone();

    try (MicrometerMetrics metrics = new MicrometerMetrics()) {
      scrapes.wired(metrics);

      String exposition = new String(early.get(30, TimeUnit.SECONDS), StandardCharsets.UTF_8);
      assertThat(exposition).contains("etcd_member_agent_");
      assertThat(scrapes.contentType(null)).startsWith("text/plain");
    }
  }

  @Test
  void aRegistryThatNeverComesIsAnErrorAfterTheWait() {
    WiringMetrics scrapes = new WiringMetrics(Duration.ofMillis(50));

    assertThatThrownBy(() -> scrapes.scrape(null))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("still starting");
  }
}
