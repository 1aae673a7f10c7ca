package io.etcdmemberagent.metrics;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The rendered exposition, per content type, as the bytes sent. It is rendered again after
 * something was recorded ({@link #invalidate}) or a second has passed (for the JVM gauges), by one
 * scrape at a time: scrapes arriving while that one renders get the previous bytes, at most one
 * recording older, instead of queueing behind it. A scraper that asks again after the render it
 * triggered always sees what was recorded before its request.
 */
final class ScrapeCache {

  private static final long MAX_AGE_NANOS = 1_000_000_000L;

  private record Rendered(byte[] body, long generation, long atNanos) {}

  private final Map<String, Rendered> byType = new ConcurrentHashMap<>();
  private final AtomicLong generation = new AtomicLong();
  private final ReentrantLock rendering = new ReentrantLock();

  void invalidate() {
    generation.incrementAndGet();
  }

  byte[] get(String type, Function<String, String> render) {
    Rendered cached = byType.get(type);
    if (fresh(cached)) {
      return cached.body();
    }
    if (cached == null) {
      rendering.lock(); // nothing to serve yet: wait for the render in progress, if any
    } else if (!rendering.tryLock()) {
      return cached.body();
    }
    try {
      Rendered again = byType.get(type);
      if (fresh(again)) {
        return again.body();
      }
      long renderedGeneration = generation.get();
      byte[] body = render.apply(type).getBytes(StandardCharsets.UTF_8);
      byType.put(type, new Rendered(body, renderedGeneration, System.nanoTime()));
      return body;
    } finally {
      rendering.unlock();
    }
  }

  private boolean fresh(Rendered r) {
    return r != null
        && r.generation() == generation.get()
        && System.nanoTime() - r.atNanos() < MAX_AGE_NANOS;
  }
}
