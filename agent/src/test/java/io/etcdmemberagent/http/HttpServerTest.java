package io.etcdmemberagent.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.testing.Http;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HttpServerTest {

  static final class FakeView implements AgentView {
    volatile List<Check> checks = List.of(Check.pass("voter", "Voter", "a voting member"));
    volatile Optional<String> liveness = Optional.empty();

    @Override
    public List<Check> readinessChecks() {
      return checks;
    }

    @Override
    public Optional<PollOutcome> latest() {
      return Optional.empty();
    }

    @Override
    public Optional<String> livenessProblem() {
      return liveness;
    }

    @Override
    public Map<String, Object> statusExtras() {
      return Map.of("agent", Map.of("version", "test"));
    }
  }

  static final MetricsSource METRICS =
      new MetricsSource() {
        @Override
        public String contentType(String accept) {
          return accept != null && accept.contains("openmetrics")
              ? "application/openmetrics-text"
              : "text/plain";
        }

        @Override
        public byte[] scrape(String accept) {
          return "etcd_member_agent_ready 1.0\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
      };

  final FakeView view = new FakeView();
  final HttpServer server = HttpServer.start("127.0.0.1", 0, view, METRICS);

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void readyzFollowsTheView() {
    assertThat(Http.get(server.port(), "/readyz"))
        .isEqualTo(new Http.Answer(200, "ok\n", "text/plain;charset=utf-8"));
    view.checks =
        List.of(
            Check.pass("voter", "Voter", "a voting member"),
            Check.fail("in-sync", "Lagging", "lag 9 > 1"));
    Http.Answer failing = Http.get(server.port(), "/readyz");
    assertThat(failing.status()).isEqualTo(503);
    assertThat(failing.body())
        .isEqualTo("[+]voter ok\n[-]in-sync failed: lag 9 > 1\nreadyz check failed\n");
    assertThat(Http.get(server.port(), "/readyz?exclude=in-sync").status()).isEqualTo(200);
    assertThat(Http.get(server.port(), "/readyz/voter").status()).isEqualTo(200);
    assertThat(Http.get(server.port(), "/readyz/in-sync").status()).isEqualTo(503);
    assertThat(Http.get(server.port(), "/readyz/unknown").status()).isEqualTo(404);
  }

  @Test
  void verboseListsEveryCheckEvenWhenReady() {
    assertThat(Http.get(server.port(), "/readyz?verbose").body())
        .isEqualTo("[+]voter ok\nreadyz check passed\n");
  }

  @Test
  void livezReportsTheLoop() {
    assertThat(Http.get(server.port(), "/livez").status()).isEqualTo(200);
    view.liveness = Optional.of("no poll finished for 9000ms");
    Http.Answer dead = Http.get(server.port(), "/livez");
    assertThat(dead.status()).isEqualTo(503);
    assertThat(dead.body()).isEqualTo("[-]loop failed: no poll finished for 9000ms\n");
  }

  @Test
  void statusIsJson() {
    Http.Answer status = Http.get(server.port(), "/status");
    assertThat(status.contentType()).startsWith("application/json");
    assertThat(status.body())
        .isEqualTo(
            "{\"ready\":true,\"checks\":[{\"name\":\"voter\",\"passed\":true,\"reason\":\"Voter\","
                + "\"message\":\"a voting member\"}],\"state\":\"Starting\",\"agent\":{\"version\":\"test\"}}");
  }

  @Test
  void metricsNegotiateOpenMetrics() {
    assertThat(Http.get(server.port(), "/metrics").contentType()).startsWith("text/plain");
    assertThat(
            Http.get(server.port(), "/metrics", "application/openmetrics-text;version=1.0.0")
                .contentType())
        .startsWith("application/openmetrics-text");
  }
}
