package io.etcdmemberagent.app;

import io.etcdmemberagent.http.MetricsSource;
import io.etcdmemberagent.metrics.MicrometerMetrics;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * /metrics while the agent is wired: the registry is built after the HTTP port opens, so a scrape
 * that comes first waits for it (at most {@code wait}) instead of getting an empty exposition.
 */
final class WiringMetrics implements MetricsSource {

  private final CompletableFuture<MicrometerMetrics> wired = new CompletableFuture<>();
  private final Duration wait;

  WiringMetrics(Duration wait) {
    this.wait = wait;
  }

  void wired(MicrometerMetrics metrics) {
    wired.complete(metrics);
  }

  @Override
  public String contentType(String accept) {
    return metrics().contentType(accept);
  }

  @Override
  public byte[] scrape(String accept) {
    return metrics().scrape(accept);
  }

  private MicrometerMetrics metrics() {
    try {
      return wired.get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("the agent is still starting: no metrics yet", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the metrics", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }
}
