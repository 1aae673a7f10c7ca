package io.etcdmemberagent.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.access.AccessDecision;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.HttpsClients;
import io.etcdmemberagent.testing.TestPki;
import io.etcdmemberagent.tls.ClientTlsFiles;
import io.etcdmemberagent.tls.ClientTlsMaterial;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The port over HTTPS: health paths anonymous, the guarded ones answering as the policy decides,
 * keys replaced in place, client certificates checked in the handshake, bad clients bounded.
 */
class HttpsServerTest {

  @TempDir Path dir;
  HttpServer server;

  /** A token policy: "good" may, "other" is known but may not, "down" finds the API down. */
  static final AccessPolicy TOKENS =
      (path, verb, token, cert) -> {
        if (cert.isPresent()) {
          return new AccessDecision.Allowed(cert.get(), "certificate");
        }
        return switch (token.orElse("")) {
          case "good" -> new AccessDecision.Allowed("good", verb + " " + path);
          case "other" -> new AccessDecision.Forbidden("other", "may not " + verb + " " + path);
          case "down" -> new AccessDecision.Unavailable("the API server did not answer");
          default -> new AccessDecision.Unauthenticated("a bearer token is required");
        };
      };

  static ServingKeys keys(TestPki.Issued issued, Optional<Path> clientCa) throws Exception {
    ClientTlsMaterial m =
        new ClientTlsFiles(clientCa, Optional.of(issued.cert()), Optional.of(issued.key())).load();
    return new ServingKeys(m.chain(), m.key().orElseThrow(), m.trusted());
  }

  HttpServer start(ServingKeys keys) {
    server =
        HttpServer.start(
            "127.0.0.1",
            0,
            Optional.of(keys),
            TOKENS,
            new HttpServerTest.FakeView(),
            HttpServerTest.METRICS);
    return server;
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void healthIsAnonymousAndTheGuardedPathsAnswerAsThePolicyDecides() throws Exception {
    TestPki pki = new TestPki(dir, "serving");
    int port = start(keys(pki.issue("agent"), Optional.empty())).port();
    SSLContext probe = HttpsClients.anyServer();
    assertThat(HttpsClients.get(probe, port, "/readyz", null).status()).isEqualTo(200);
    assertThat(HttpsClients.get(probe, port, "/livez", null).status()).isEqualTo(200);
    assertThat(HttpsClients.get(probe, port, "/readyz?verbose", null).status()).isEqualTo(200);
    for (String path : List.of("/metrics", "/status")) {
      assertThat(HttpsClients.get(probe, port, path, null).status()).as(path).isEqualTo(401);
      assertThat(HttpsClients.get(probe, port, path, "other").status()).as(path).isEqualTo(403);
      assertThat(HttpsClients.get(probe, port, path, "down").status()).as(path).isEqualTo(503);
      assertThat(HttpsClients.get(probe, port, path, "good").status()).as(path).isEqualTo(200);
    }
    assertThat(HttpsClients.get(probe, port, "/metrics", "good").body())
        .contains("etcd_member_agent_ready");
    assertThat(HttpsClients.get(probe, port, "/readyz", "down").status())
        .as("a failing API server never touches /readyz")
        .isEqualTo(200);
  }

  @Test
  void plainHttpOnTheHttpsPortGetsNoAnswerAndTheServerGoesOn() throws Exception {
    TestPki pki = new TestPki(dir, "serving");
    int port = start(keys(pki.issue("agent"), Optional.empty())).port();
    assertThat(Http.statusOrMinusOne(port, "/readyz")).isEqualTo(-1);
    assertThat(HttpsClients.get(HttpsClients.anyServer(), port, "/readyz", null).status())
        .isEqualTo(200);
  }

  @Test
  void onlyTls12AndNewerAreNegotiated() throws Exception {
    TestPki pki = new TestPki(dir, "serving");
    int port = start(keys(pki.issue("agent"), Optional.empty())).port();
    for (String protocol : List.of("TLSv1.2", "TLSv1.3")) {
      SSLContext only = HttpsClients.onlyProtocol(protocol);
      try (SSLSocket s = (SSLSocket) only.getSocketFactory().createSocket("127.0.0.1", port)) {
        s.setEnabledProtocols(new String[] {protocol});
        s.startHandshake();
        assertThat(s.getSession().getProtocol()).isEqualTo(protocol);
      }
    }
  }

  @Test
  void newKeysAreServedWithoutARestart() throws Exception {
    TestPki pki = new TestPki(dir, "serving");
    int port = start(keys(pki.issue("first"), Optional.empty())).port();
    SSLContext trusting = HttpsClients.trusting(pki.caCert(), null, null);
    assertThat(HttpsClients.get(trusting, port, "/readyz", null).served().getSubjectX500Principal())
        .hasToString("CN=first");
    server.reloadKeys(keys(pki.issue("second"), Optional.empty()));
    assertThat(HttpsClients.get(trusting, port, "/readyz", null).served().getSubjectX500Principal())
        .hasToString("CN=second");
  }

  @Test
  void aClientCertificateIsCheckedInTheHandshake() throws Exception {
    TestPki servingCa = new TestPki(dir, "serving");
    TestPki clients = new TestPki(dir, "clients");
    TestPki strangers = new TestPki(dir, "strangers");
    int port = start(keys(servingCa.issue("agent"), Optional.of(clients.caCert()))).port();
    TestPki.Issued scraper = clients.issue("scraper");
    TestPki.Issued stranger = strangers.issue("scraper");
    Path ca = servingCa.caCert();
    assertThat(
            HttpsClients.get(HttpsClients.trusting(ca, null, null), port, "/metrics", null)
                .status())
        .as("no certificate")
        .isEqualTo(401);
    assertThat(
            HttpsClients.statusOrMinusOne(
                HttpsClients.trusting(ca, stranger.cert(), stranger.key()), port, "/metrics"))
        .as("a certificate from another CA is refused in the handshake")
        .isEqualTo(-1);
    assertThat(
            HttpsClients.get(
                    HttpsClients.trusting(ca, scraper.cert(), scraper.key()),
                    port,
                    "/metrics",
                    null)
                .status())
        .isEqualTo(200);
    assertThat(HttpsClients.get(HttpsClients.anyServer(), port, "/readyz", null).status())
        .as("probes need no certificate")
        .isEqualTo(200);
  }

  @Test
  void oversizedHeadersGetABoundedAnswer() throws Exception {
    TestPki pki = new TestPki(dir, "serving");
    int port = start(keys(pki.issue("agent"), Optional.empty())).port();
    String big = "x".repeat(64 * 1024);
    try (SSLSocket s =
        (SSLSocket) HttpsClients.anyServer().getSocketFactory().createSocket("127.0.0.1", port)) {
      s.setSoTimeout(5000);
      s.getOutputStream()
          .write(
              ("GET /readyz HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      byte[] head = s.getInputStream().readNBytes(12);
      assertThat(new String(head, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 431");
    }
  }

  @Test
  void aHandshakeThatNeverStartsIsClosedByTheServer() throws Exception {
    TestPki pki = new TestPki(dir, "serving");
    int port = start(keys(pki.issue("agent"), Optional.empty())).port();
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
      s.setSoTimeout((int) TlsConnector.IDLE_TIMEOUT_MS + 10_000);
      InputStream in = s.getInputStream();
      assertThat(in.read()).as("closed after the idle timeout, not held forever").isEqualTo(-1);
    }
  }
}
