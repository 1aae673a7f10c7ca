package io.etcdmemberagent.app.publish;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The thread of an API writer: runs rounds until closed; each round says how long to wait before
 * the next, and a signal (new work) ends the wait early. An unexpected exception in a round is
 * handed to {@code onError}, which says how long to back off; the thread goes on.
 */
final class WriterLoop implements AutoCloseable {

  private final Wakeup wakeup = new Wakeup();
  private final Thread thread;
  private volatile boolean running = true;

  WriterLoop(
      String name,
      Supplier<Duration> round,
      Function<RuntimeException, Duration> onError,
      Runnable afterRound) {
    this.thread =
        new Thread(
            () -> {
              while (running) {
                Duration wait;
                try {
                  wait = round.get();
                } catch (RuntimeException e) {
                  wait = onError.apply(e);
                }
                afterRound.run();
                if (!running || !wakeup.await(wait)) {
                  return;
                }
              }
            },
            name);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  void signal() {
    wakeup.signal();
  }

  /** How long from now until {@code at} (zero when it has passed). */
  static Duration until(Clock clock, Instant at) {
    Duration d = Duration.between(clock.instant(), at);
    return d.isNegative() ? Duration.ZERO : d;
  }

  /** Stops the thread (waiting up to 5 s for a round in progress). */
  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
