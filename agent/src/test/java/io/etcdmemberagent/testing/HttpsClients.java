package io.etcdmemberagent.testing;

import io.etcdmemberagent.tls.ClientTlsFiles;
import io.etcdmemberagent.tls.ClientTlsMaterial;
import io.etcdmemberagent.tls.TlsFileException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * One HTTPS request per connection to the agent's port, so that each request makes a new handshake
 * (a rotated certificate is seen at once) and the served certificate can be read back.
 */
public final class HttpsClients {

  /** The answer, and the certificate the server presented. */
  public record Answer(int status, String body, X509Certificate served) {}

  private HttpsClients() {}

  /** Trusts any server certificate, as a kubelet's HTTPS probe does. */
  public static SSLContext anyServer() {
    return context(null, Optional.empty(), Optional.empty(), "TLS");
  }

  /** Trusts {@code ca}; presents {@code cert}/{@code key} when given. */
  public static SSLContext trusting(Path ca, Path cert, Path key) {
    return context(ca, Optional.ofNullable(cert), Optional.ofNullable(key), "TLS");
  }

  /** Trusts any server, offering only {@code protocol} (e.g. {@code TLSv1.1}). */
  public static SSLContext onlyProtocol(String protocol) {
    return context(null, Optional.empty(), Optional.empty(), protocol);
  }

  private static SSLContext context(
      Path ca, Optional<Path> cert, Optional<Path> key, String protocol) {
    try {
      ClientTlsMaterial m = new ClientTlsFiles(Optional.ofNullable(ca), cert, key).load();
      TrustManager[] trust;
      if (ca == null) {
        trust = new TrustManager[] {new AnyServer()};
      } else {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        for (int i = 0; i < m.trusted().size(); i++) {
          store.setCertificateEntry("ca-" + i, m.trusted().get(i));
        }
        TrustManagerFactory f =
            TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        f.init(store);
        trust = f.getTrustManagers();
      }
      KeyManagerFactory keys = null;
      if (m.key().isPresent()) {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setKeyEntry(
            "client", m.key().get(), "x".toCharArray(), m.chain().toArray(Certificate[]::new));
        keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, "x".toCharArray());
      }
      SSLContext context = SSLContext.getInstance(protocol);
      context.init(
          keys == null
              ? null
              : new javax.net.ssl.KeyManager[] {
                new AlwaysPresent((javax.net.ssl.X509KeyManager) keys.getKeyManagers()[0])
              },
          trust,
          null);
      return context;
    } catch (GeneralSecurityException | IOException | TlsFileException e) {
      throw new IllegalStateException(e);
    }
  }

  /** GET {@code path} on 127.0.0.1:{@code port}, with a bearer token if not null. */
  public static Answer get(SSLContext context, int port, String path, String bearerToken) {
    return get(context, "127.0.0.1", port, path, bearerToken);
  }

  /** GET {@code path} on {@code host}:{@code port} (a Pod's address), with a bearer token. */
  public static Answer get(
      SSLContext context, String host, int port, String path, String bearerToken) {
    try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket()) {
      // as Go's clients (the kubelet, Prometheus) do: without it the request waits behind the
      // handshake's last record for the server's delayed ACK, 40 ms on Linux
      socket.setTcpNoDelay(true);
      socket.connect(new InetSocketAddress(host, port), 2000);
      socket.setSoTimeout(5000);
      socket.startHandshake();
      X509Certificate served = (X509Certificate) socket.getSession().getPeerCertificates()[0];
      String request =
          "GET "
              + path
              + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              + (bearerToken == null ? "" : "Authorization: Bearer " + bearerToken + "\r\n")
              + "Connection: close\r\n\r\n";
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String response = readAll(socket.getInputStream());
      int status = Integer.parseInt(response.substring(9, 12));
      int bodyAt = response.indexOf("\r\n\r\n");
      String body = bodyAt < 0 ? "" : response.substring(bodyAt + 4);
      return new Answer(status, dechunk(response, body), served);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The status, or -1 when the connection or the handshake fails. */
  public static int statusOrMinusOne(SSLContext context, int port, String path) {
    return statusOrMinusOne(context, "127.0.0.1", port, path);
  }

  /**
   * The status from {@code host} (a Pod's address), or -1 when the connection or handshake fails.
   */
  public static int statusOrMinusOne(SSLContext context, String host, int port, String path) {
    try {
      return get(context, host, port, path, null).status();
    } catch (UncheckedIOException e) {
      return -1;
    }
  }

  /** The status with a bearer token, or -1 when the connection, handshake or read fails. */
  public static int statusWithToken(SSLContext context, int port, String path, String token) {
    try {
      return get(context, port, path, token).status();
    } catch (UncheckedIOException e) {
      return -1;
    }
  }

  private static String readAll(InputStream in) throws IOException {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    in.transferTo(all);
    return all.toString(StandardCharsets.UTF_8);
  }

  /** Jetty may answer in chunks; the tests read small bodies whole. */
  private static String dechunk(String response, String body) {
    String head = response.substring(0, Math.max(0, response.indexOf("\r\n\r\n"))).toLowerCase();
    if (!head.contains("transfer-encoding: chunked")) {
      return body;
    }
    StringBuilder out = new StringBuilder();
    int at = 0;
    while (at < body.length()) {
      int eol = body.indexOf("\r\n", at);
      int size = Integer.parseInt(body.substring(at, eol).trim(), 16);
      if (size == 0) {
        break;
      }
      out.append(body, eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
    }
    return out.toString();
  }

  /**
   * Presents the certificate whatever CAs the server names, as curl does (the JDK's own key manager
   * would send none for a foreign CA, and the server's check would go untested).
   */
  private static final class AlwaysPresent extends javax.net.ssl.X509ExtendedKeyManager {
    private final javax.net.ssl.X509KeyManager keys;

    AlwaysPresent(javax.net.ssl.X509KeyManager keys) {
      this.keys = keys;
    }

    @Override
    public String chooseClientAlias(
        String[] keyType, java.security.Principal[] issuers, java.net.Socket socket) {
      return "client";
    }

    @Override
    public String chooseEngineClientAlias(
        String[] keyType, java.security.Principal[] issuers, javax.net.ssl.SSLEngine engine) {
      return "client";
    }

    @Override
    public String[] getClientAliases(String keyType, java.security.Principal[] issuers) {
      return new String[] {"client"};
    }

    @Override
    public String[] getServerAliases(String keyType, java.security.Principal[] issuers) {
      return null;
    }

    @Override
    public String chooseServerAlias(
        String keyType, java.security.Principal[] issuers, java.net.Socket socket) {
      return null;
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      return keys.getCertificateChain(alias);
    }

    @Override
    public java.security.PrivateKey getPrivateKey(String alias) {
      return keys.getPrivateKey(alias);
    }
  }

  private static final class AnyServer implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
