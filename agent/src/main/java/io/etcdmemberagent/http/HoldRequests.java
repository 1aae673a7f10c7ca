package io.etcdmemberagent.http;

import io.javalin.http.Context;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code GET /hold-etcd}: etcd's preStop hook. The answer is streamed: a line every {@link
 * #HEARTBEAT} while the hold lasts (so no idle timeout on the way ends it early; the kubelet reads
 * the body, up to 10 KiB, before it goes on to stop etcd: the progress line only when it changed, a
 * dot otherwise), then the settlement's outcome, then the end of the body. Each hold runs on a
 * thread of its own, at most {@link #MAX_OPEN} at once: holds never take the threads that answer
 * probes. A request beyond that gets 429 at once.
 */
final class HoldRequests implements AutoCloseable {

  static final String PATH = "/hold-etcd";
  static final int MAX_OPEN = 4;
  static final Duration HEARTBEAT = Duration.ofSeconds(2);

  /**
   * The kubelet reads at most 10 KiB of a hook's body and then goes on: past this many bytes only a
   * dot per heartbeat is written, and a line never exceeds {@link #MAX_LINE} characters.
   */
  static final int BODY_BUDGET = 6 * 1024;

  static final int MAX_LINE = 160;

  private final EtcdHold hold;
  private final ExecutorService threads =
      new ThreadPoolExecutor(
          0,
          MAX_OPEN,
          30,
          TimeUnit.SECONDS,
          new SynchronousQueue<>(),
          r -> {
            Thread t = new Thread(r, "hold-etcd");
            t.setDaemon(true);
            return t;
          });
  private int open;
  private int received;

  HoldRequests(EtcdHold hold) {
    this.hold = hold;
  }

  void serve(Context ctx) {
    if (!enter()) {
      ctx.status(429)
          .contentType("text/plain; charset=utf-8")
          .result("too many holds open (" + MAX_OPEN + ")\n");
      return;
    }
    try {
      ctx.async(
          config -> {
            config.executor = threads;
            config.timeout = 0; // bounded by the settlement's own budget
          },
          () -> {
            try {
              stream(ctx);
            } finally {
              exit();
            }
          });
    } catch (RuntimeException e) {
      exit();
      throw e;
    }
  }

  private void stream(Context ctx) throws IOException, InterruptedException {
    ctx.status(200).contentType("text/plain; charset=utf-8");
    // the servlet's own stream: through Javalin's (compressing) wrapper nothing reached the client
    // before the handler ended, neither the heartbeats nor, at a stop, the answer itself
    OutputStream out = ctx.res().getOutputStream();
    CompletableFuture<String> settled = hold.hold();
    String said = "";
    int written = 0;
    while (true) {
      try {
        String outcome = settled.get(HEARTBEAT.toMillis(), TimeUnit.MILLISECONDS);
        finish(out, "done: " + outcome);
        return;
      } catch (TimeoutException e) {
        String progress = "holding: " + hold.progress();
        boolean news = !progress.equals(said) && written < BODY_BUDGET;
        written += write(out, news ? progress : ".");
        said = news ? progress : said;
      } catch (ExecutionException e) {
        finish(out, "done: the settlement failed: " + e.getCause());
        return;
      }
    }
  }

  /**
   * The last line, and the end of the body, on the wire before the hold counts as answered: the
   * stopping agent closes its port as soon as no hold is open, and an answer still in the server's
   * hands then never reaches the kubelet (its hook fails with "EOF", seen at a scale-down).
   */
  private static void finish(OutputStream out, String line) throws IOException {
    write(out, line);
    out.close();
  }

  private static int write(OutputStream out, String line) throws IOException {
    String oneLine = line.replace('\n', ' ');
    if (oneLine.length() > MAX_LINE) {
      oneLine = oneLine.substring(0, MAX_LINE);
    }
    byte[] bytes = (oneLine + "\n").getBytes(StandardCharsets.UTF_8);
    out.write(bytes);
    out.flush();
    return bytes.length;
  }

  private synchronized boolean enter() {
    if (open >= MAX_OPEN) {
      return false;
    }
    open++;
    received++;
    return true;
  }

  private synchronized void exit() {
    open--;
    notifyAll();
  }

  /**
   * Waits, at most {@code timeout}, until no hold is open; when none has come yet, first gives one
   * {@code firstWithin} to arrive (the kubelet calls etcd's preStop as it signals the agent).
   */
  synchronized void awaitNoneOpen(Duration firstWithin, Duration timeout)
      throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    long firstBy = start + firstWithin.toNanos();
    while (open > 0 || (received == 0 && System.nanoTime() < firstBy)) {
      long left = Math.min(deadline, open > 0 ? deadline : firstBy) - System.nanoTime();
      if (left <= 0) {
        return;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  @Override
  public void close() {
    threads.shutdownNow();
  }
}
