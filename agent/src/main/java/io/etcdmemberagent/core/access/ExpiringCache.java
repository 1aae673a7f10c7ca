package io.etcdmemberagent.core.access;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A map whose entries end after their own lifetime and which holds at most {@code capacity} entries
 * (the least recently used one goes first). Thread-safe.
 */
public final class ExpiringCache<K, V> {

  private record Entry<V>(V value, Instant until) {}

  private final int capacity;
  private final LinkedHashMap<K, Entry<V>> entries;

  public ExpiringCache(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
    }
    this.capacity = capacity;
    this.entries =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<K, Entry<V>> eldest) {
            return size() > ExpiringCache.this.capacity;
          }
        };
  }

  /** The value, if one was put and has not ended by {@code now}. */
  public synchronized Optional<V> get(K key, Instant now) {
    Entry<V> e = entries.get(key);
    if (e == null) {
      return Optional.empty();
    }
    if (!now.isBefore(e.until())) {
      entries.remove(key);
      return Optional.empty();
    }
    return Optional.of(e.value());
  }

  public synchronized void put(K key, V value, Instant now, Duration lifetime) {
    entries.put(key, new Entry<>(value, now.plus(lifetime)));
  }

  public synchronized int size() {
    return entries.size();
  }
}
