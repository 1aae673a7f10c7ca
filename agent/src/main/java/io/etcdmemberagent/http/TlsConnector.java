package io.etcdmemberagent.http;

import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * The HTTPS connector: TLS 1.2 and 1.3 only, no plain HTTP on the same port, a client certificate
 * asked for (not required, so that probes need none) when client CAs are given, and keys replaced
 * in place without dropping the listener.
 */
final class TlsConnector {

  /** Only in memory: a key store needs a password for its key entry. */
  private static final String IN_MEMORY = "etcd-member-agent";

  /**
   * A handshake that never completes, or a client that sends its request byte by byte, holds a
   * connection at most this long without progress.
   */
  static final long IDLE_TIMEOUT_MS = 10_000;

  private final SslContextFactory.Server tls = new SslContextFactory.Server();

  TlsConnector(ServingKeys keys) {
    tls.setIncludeProtocols("TLSv1.2", "TLSv1.3");
    tls.setKeyManagerPassword(IN_MEMORY);
    tls.setKeyStorePassword(IN_MEMORY);
    apply(tls, keys);
  }

  Connector connector(Server server, HttpConfiguration base, String host, int port) {
    HttpConfiguration https = new HttpConfiguration(base);
    SecureRequestCustomizer secure = new SecureRequestCustomizer();
    // probes and scrapers dial Pod IPs, which a serving certificate need not name
    secure.setSniHostCheck(false);
    https.addCustomizer(secure);
    ServerConnector connector =
        new ServerConnector(
            server,
            new SslConnectionFactory(tls, HttpVersion.HTTP_1_1.asString()),
            new HttpConnectionFactory(https));
    connector.setHost(host);
    connector.setPort(port);
    connector.setIdleTimeout(IDLE_TIMEOUT_MS);
    return connector;
  }

  /** New handshakes use {@code keys}; open connections keep theirs. */
  void reload(ServingKeys keys) {
    try {
      tls.reload(f -> apply((SslContextFactory.Server) f, keys));
    } catch (Exception e) {
      throw new IllegalStateException("cannot use the new serving keys: " + e.getMessage(), e);
    }
  }

  private static void apply(SslContextFactory.Server f, ServingKeys keys) {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry(
          "serving", keys.key(), IN_MEMORY.toCharArray(), keys.chain().toArray(Certificate[]::new));
      f.setKeyStore(store);
      f.setTrustStore(keys.clientCas().isEmpty() ? null : trustStore(keys.clientCas()));
      f.setWantClientAuth(!keys.clientCas().isEmpty());
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new IllegalStateException("cannot hold the serving keys: " + e.getMessage(), e);
    }
  }

  private static KeyStore trustStore(List<X509Certificate> cas)
      throws GeneralSecurityException, java.io.IOException {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    for (int i = 0; i < cas.size(); i++) {
      store.setCertificateEntry("client-ca-" + i, cas.get(i));
    }
    return store;
  }
}
