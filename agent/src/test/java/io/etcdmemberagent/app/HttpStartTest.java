package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcdmemberagent.http.HttpServer;
import io.etcdmemberagent.http.MetricsSource;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class HttpStartTest {

  static final MetricsSource NO_METRICS =
      new MetricsSource() {
        @Override
        public String contentType(String accept) {
          return "text/plain";
        }

        @Override
        public byte[] scrape(String accept) {
          return new byte[0];
        }
      };

  static HttpServer serve() {
    return HttpServer.start("127.0.0.1", 0, new WiringView(), NO_METRICS);
  }

  @Test
  void awaitGivesTheStartedServer() {
    HttpServer server = HttpStart.begin(HttpStartTest::serve).await();
    try {
      assertThat(server.port()).isPositive();
    } finally {
      server.close();
    }
  }

  @Test
  void awaitThrowsWhatTheStartThrew() {
    IllegalStateException taken = new IllegalStateException("Failed to bind: address in use");
    HttpStart start =
        HttpStart.begin(
            () -> {
              throw taken;
            });

    assertThatThrownBy(start::await).isSameAs(taken);
  }

  @Test
  void abandonStopsAServerThatStarted() throws IOException {
    int[] port = new int[1];
    HttpStart start =
        HttpStart.begin(
            () -> {
              HttpServer server = serve();
              port[0] = server.port();
              return server;
            });

    start.abandon();

    try (ServerSocket again = new ServerSocket(port[0], 1, InetAddress.getLoopbackAddress())) {
      assertThat(again.getLocalPort()).isEqualTo(port[0]);
    }
  }

  @Test
  void abandonAfterAFailedStartSaysNothing() {
    HttpStart start =
        HttpStart.begin(
            () -> {
              throw new IllegalStateException("Failed to bind");
            });

    assertThatCode(start::abandon).doesNotThrowAnyException();
  }
}
