package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.access.AccessDecision;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ReviewLaneTest {

  @Test
  void theSameQuestionSharesOneReviewAndTheLaneIsBounded() throws Exception {
    ReviewLane lane = new ReviewLane();
    CountDownLatch apiServer = new CountDownLatch(1);
    AtomicInteger asked = new AtomicInteger();
    AccessDecision allowed = new AccessDecision.Allowed("reader", "ok");
    java.util.function.Supplier<AccessDecision> hanging =
        () -> {
          asked.incrementAndGet();
          try {
            apiServer.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return allowed;
        };
    CompletableFuture<AccessDecision> first = lane.review("t|get|/metrics", hanging);
    CompletableFuture<AccessDecision> again = lane.review("t|get|/metrics", hanging);
    assertThat(again).as("one review for the same question").isSameAs(first);

    List<CompletableFuture<AccessDecision>> others = new ArrayList<>();
    for (int i = 0; i < ReviewLane.THREADS + ReviewLane.WAITING - 1; i++) {
      others.add(lane.review("other-" + i, hanging));
    }
    CompletableFuture<AccessDecision> beyond = lane.review("one-too-many", hanging);
    assertThat(beyond).as("refused at once, not queued").isDone();
    assertThat(beyond.join())
        .isInstanceOfSatisfying(
            AccessDecision.Unavailable.class,
            u -> assertThat(u.detail()).contains("too many access reviews in flight"));
    assertThat(others).noneMatch(CompletableFuture::isDone);

    apiServer.countDown();
    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(allowed);
    for (CompletableFuture<AccessDecision> f : others) {
      assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(allowed);
    }
    assertThat(asked.get()).as("reviews asked").isEqualTo(ReviewLane.THREADS + ReviewLane.WAITING);
    assertThat(lane.review("t|get|/metrics", () -> allowed).get(10, TimeUnit.SECONDS))
        .as("a question asked again once answered is a new review")
        .isEqualTo(allowed);
  }
}
