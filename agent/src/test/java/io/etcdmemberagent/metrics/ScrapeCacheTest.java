package io.etcdmemberagent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ScrapeCacheTest {

  final ScrapeCache cache = new ScrapeCache();
  final AtomicInteger renders = new AtomicInteger();

  String render(String type) {
    return type + " #" + renders.incrementAndGet();
  }

  String get(String type) {
    return new String(cache.get(type, this::render), StandardCharsets.UTF_8);
  }

  @Test
  void rendersOnceUntilSomethingIsRecorded() {
    assertThat(get("text")).isEqualTo("text #1");
    assertThat(get("text")).isEqualTo("text #1");
    cache.invalidate();
    assertThat(get("text")).isEqualTo("text #2");
  }

  @Test
  void eachContentTypeHasItsOwnRendering() {
    assertThat(get("text")).isEqualTo("text #1");
    assertThat(get("openmetrics")).isEqualTo("openmetrics #2");
    assertThat(get("text")).isEqualTo("text #1");
  }

  @Test
  void aScrapeDuringARenderGetsThePreviousBytesInsteadOfWaiting() throws Exception {
    assertThat(get("text")).isEqualTo("text #1");
    cache.invalidate();
    CountDownLatch renderStarted = new CountDownLatch(1);
    CountDownLatch finishRender = new CountDownLatch(1);
    CompletableFuture<byte[]> slow =
        CompletableFuture.supplyAsync(
            () ->
                cache.get(
                    "text",
                    type -> {
                      renderStarted.countDown();
                      await(finishRender);
                      return "text fresh";
                    }));
    assertThat(renderStarted.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(get("text")).as("served while the other scrape renders").isEqualTo("text #1");
    finishRender.countDown();
    assertThat(new String(slow.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8))
        .isEqualTo("text fresh");
    assertThat(get("text")).isEqualTo("text fresh");
    assertThat(renders).hasValue(1);
  }

  @Test
  void aRecordingDuringARenderMakesTheNextScrapeRenderAgain() {
    String first =
        new String(
            cache.get(
                "text",
                type -> {
                  cache.invalidate(); // a poll recorded while the registry was being read
                  return "maybe without the new poll";
                }),
            StandardCharsets.UTF_8);
    assertThat(first).isEqualTo("maybe without the new poll");
    assertThat(get("text")).isEqualTo("text #1");
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
