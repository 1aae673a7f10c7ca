package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Poll;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The local "etcd" is something else: an HTTP/1.1 server, or a port that answers with garbage and
 * hangs up. The agent must say why it is not ready and keep polling, never crash or stop.
 */
class EndpointFaultsE2E {

  @Test
  void anHttpServerInsteadOfEtcdIsReportedAndTheLoopGoesOn() throws Exception {
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", FreePorts.next()), 0);
    http.createContext(
        "/",
        ex -> {
          byte[] body = "<html>not etcd</html>".getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(200, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    http.start();
    try {
      survives("http://127.0.0.1:" + http.getAddress().getPort());
    } finally {
      http.stop(0);
    }
  }

  @Test
  void garbageOnThePortIsReportedAndTheLoopGoesOn() throws Exception {
    try (ServerSocket garbage =
        new ServerSocket(FreePorts.next(), 50, InetAddress.getLoopbackAddress())) {
      Thread t =
          new Thread(
              () -> {
                Random random = new Random(1);
                while (!garbage.isClosed()) {
                  try (Socket s = garbage.accept()) {
                    byte[] noise = new byte[4096];
                    random.nextBytes(noise);
                    OutputStream out = s.getOutputStream();
                    out.write(noise);
                    out.flush();
                  } catch (IOException e) {
                    return;
                  }
                }
              },
              "garbage");
      t.setDaemon(true);
      t.start();
      survives("http://127.0.0.1:" + garbage.getLocalPort());
    }
  }

  private static double polls(int port) {
    for (String line : Http.get(port, "/metrics").body().split("\n")) {
      if (line.startsWith("etcd_member_agent_polls_total")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  private static void survives(String endpoint) {
    int port = FreePorts.next();
    try (AgentProcess agent =
        AgentProcess.start(
            port,
            Map.of(),
            "run",
            "--etcd-endpoint=" + endpoint,
            "--cluster-endpoints=" + endpoint,
            "--http-host=127.0.0.1",
            "--http-port=" + port,
            "--poll-interval=300ms",
            "--etcd-timeout=1s",
            "--log-format=json",
            "--kube=off")) {
      Poll.until(
          "/livez 200", Duration.ofSeconds(20), () -> Http.statusOrMinusOne(port, "/livez") == 200);
      double before = polls(port);
      Poll.until(
          "five more polls into the bad endpoint",
          Duration.ofSeconds(15),
          () -> polls(port) >= before + 5);
      Http.Answer readyz = Http.get(port, "/readyz");
      assertThat(readyz.status()).isEqualTo(503);
      assertThat(readyz.body()).contains("[-]serving failed");
      assertThat(Http.statusOrMinusOne(port, "/livez")).isEqualTo(200);
      assertThat(agent.process().isAlive()).isTrue();
      assertThat(agent.output()).doesNotContain("Exception in thread");
    }
  }
}
