package io.etcdmemberagent.app;

import io.etcdmemberagent.core.access.AccessDecision;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The access reviews that must ask the API server, kept off the request threads the probes use: at
 * most {@link #THREADS} run at once on threads of their own and {@link #WAITING} wait; the same
 * question (token, verb and path) asked again while in flight shares the one review; beyond that a
 * caller gets 503 at once. A slow or paused API server, or a flood of unknown tokens, then costs
 * the probes nothing.
 */
final class ReviewLane {

  static final int THREADS = 4;
  static final int WAITING = 32;

  private final ThreadPoolExecutor threads =
      new ThreadPoolExecutor(
          THREADS,
          THREADS,
          30,
          TimeUnit.SECONDS,
          new ArrayBlockingQueue<>(WAITING),
          r -> {
            Thread t = new Thread(r, "access-review");
            t.setDaemon(true);
            return t;
          });
  private final ConcurrentHashMap<String, CompletableFuture<AccessDecision>> inFlight =
      new ConcurrentHashMap<>();

  ReviewLane() {
    threads.allowCoreThreadTimeOut(true);
  }

  CompletableFuture<AccessDecision> review(String question, Supplier<AccessDecision> review) {
    CompletableFuture<AccessDecision> mine = new CompletableFuture<>();
    CompletableFuture<AccessDecision> asked = inFlight.putIfAbsent(question, mine);
    if (asked != null) {
      return asked;
    }
    try {
      threads.execute(
          () -> {
            try {
              mine.complete(review.get());
            } catch (RuntimeException e) {
              mine.complete(new AccessDecision.Unavailable("the review failed: " + e));
            } finally {
              inFlight.remove(question, mine);
            }
          });
    } catch (RejectedExecutionException e) {
      inFlight.remove(question, mine);
      mine.complete(
          new AccessDecision.Unavailable(
              "too many access reviews in flight (" + (THREADS + WAITING) + "); ask again"));
    }
    return mine;
  }
}
