package io.etcdmemberagent.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcdmemberagent.testing.Http;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** etcd's preStop hold: streamed until the settlement ends, bounded, never on the probe threads. */
class HoldRequestsTest {

  final CompletableFuture<String> settled = new CompletableFuture<>();
  volatile boolean longProgress;
  final AtomicInteger progressCalls = new AtomicInteger();
  final HttpServer server =
      serverHolding(
          settled,
          () -> {
            int n = progressCalls.incrementAndGet();
            return longProgress
                ? "x".repeat(500) + n
                : "awaiting turn: member 5 (db-4) leaves first";
          });
  final HttpClient client = HttpClient.newHttpClient();

  static HttpServer serverHolding(
      CompletableFuture<String> settled, java.util.function.Supplier<String> progress) {
    return HttpServer.start(
        "127.0.0.1",
        0,
        Optional.empty(),
        AccessPolicy.ANYONE,
        new HttpServerTest.FakeView(),
        HttpServerTest.METRICS,
        new EtcdHold() {
          @Override
          public CompletableFuture<String> hold() {
            return settled;
          }

          @Override
          public String progress() {
            return progress.get();
          }
        });
  }

  @AfterEach
  void stop() {
    server.close();
  }

  CompletableFuture<HttpResponse<String>> holdRequest() {
    return client.sendAsync(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/hold-etcd"))
            .timeout(Duration.ofSeconds(30))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theAnswerEndsOnlyWhenTheMemberIsSettledAndSaysWhatItWaitedFor() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> holds = new ArrayList<>();
    for (int i = 0; i < HoldRequests.MAX_OPEN; i++) {
      holds.add(holdRequest());
    }
    // probes are answered while every hold is open
    for (int i = 0; i < 20; i++) {
      assertThat(Http.get(server.port(), "/readyz").status()).isEqualTo(200);
    }
    HttpResponse<String> refused =
        client.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/hold-etcd"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(refused.statusCode()).as("a hold beyond the cap").isEqualTo(429);
    assertThat(holds).as("no hold ends before the settlement").noneMatch(CompletableFuture::isDone);
    // still open past one heartbeat, so that a progress line was streamed
    assertThatThrownBy(
            () -> holds.get(0).get(HoldRequests.HEARTBEAT.toMillis() + 500, TimeUnit.MILLISECONDS))
        .isInstanceOf(TimeoutException.class);
    settled.complete("settled: remove 4 (ordinal 3)");
    for (CompletableFuture<HttpResponse<String>> h : holds) {
      HttpResponse<String> answer = h.get(10, TimeUnit.SECONDS);
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(answer.body())
          .startsWith("holding: awaiting turn: member 5 (db-4) leaves first\n")
          .endsWith("done: settled: remove 4 (ordinal 3)\n");
    }
    server.awaitHoldsAnswered(Duration.ofSeconds(1), Duration.ofSeconds(5));
    assertThat(holdRequest().get(10, TimeUnit.SECONDS).body())
        .as("once settled, a hold answers at once")
        .isEqualTo("done: settled: remove 4 (ordinal 3)\n");
  }

  @Test
  void aStoppingServerGivesAHoldTimeToArriveAndToBeAnswered() throws Exception {
    settled.complete("settled: NotSurplus");
    long t0 = System.nanoTime();
    server.awaitHoldsAnswered(Duration.ofMillis(300), Duration.ofSeconds(5));
    assertThat(System.nanoTime() - t0)
        .as("no hold came: waited for one")
        .isGreaterThanOrEqualTo(300_000_000L);
    assertThat(holdRequest().get(10, TimeUnit.SECONDS).body())
        .isEqualTo("done: settled: NotSurplus\n");
    t0 = System.nanoTime();
    server.awaitHoldsAnswered(Duration.ofSeconds(30), Duration.ofSeconds(60));
    assertThat(System.nanoTime() - t0)
        .as("a hold came and was answered: no waiting")
        .isLessThan(5_000_000_000L);
  }

  /**
   * The agent closes its port as soon as every hold is answered: the answer must be on the wire by
   * then, or the kubelet reads no response at all (its "Get …: EOF", a FailedPreStopHook Event,
   * seen on the node at a scale-down).
   */
  @Test
  void anAnswerIsWhollySentBeforeTheServerMayClose() throws Exception {
    for (int i = 0; i < 30; i++) {
      HttpServer closing =
          serverHolding(CompletableFuture.completedFuture("settled: NotSurplus"), () -> "");
      try {
        // a client of its own: a pooled connection to an earlier round's port is not this round's
        CompletableFuture<HttpResponse<String>> answer =
            HttpClient.newHttpClient()
                .sendAsync(
                    HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + closing.port() + "/hold-etcd"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                    HttpResponse.BodyHandlers.ofString());
        closing.awaitHoldsAnswered(Duration.ofSeconds(10), Duration.ofSeconds(10));
        closing.close(); // as the stopping agent does right after
        assertThat(answer.get(10, TimeUnit.SECONDS).body())
            .as("round %d", i)
            .isEqualTo("done: settled: NotSurplus\n");
      } finally {
        closing.close();
      }
    }
  }

  @Test
  void aLongHoldStaysUnderWhatTheKubeletReads() throws Exception {
    longProgress = true; // every heartbeat a new, long line
    CompletableFuture<HttpResponse<String>> h = holdRequest();
    assertThatThrownBy(
            () -> h.get(3 * HoldRequests.HEARTBEAT.toMillis() + 500, TimeUnit.MILLISECONDS))
        .isInstanceOf(TimeoutException.class);
    settled.complete("done");
    String body = h.get(10, TimeUnit.SECONDS).body();
    assertThat(body.lines().filter(l -> l.startsWith("holding: x")).count()).isGreaterThan(2);
    assertThat(body.lines()).allMatch(l -> l.length() <= HoldRequests.MAX_LINE);
    assertThat(body.length()).isLessThan(10 * 1024);
  }
}
