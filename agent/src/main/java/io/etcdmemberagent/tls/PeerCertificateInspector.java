package io.etcdmemberagent.tls;

import io.etcdmemberagent.core.tls.PeerTlsFacts;
import io.etcdmemberagent.core.tls.PeerUrlFacts;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * Looks at this member's peer URLs as the live member list advertises them: an http URL is reported
 * as such; for https it dials the peer port and reads the certificate the member serves (the
 * handshake may then fail for want of a client certificate: the served chain is already known),
 * else reads {@code --peer-cert}. The chain is judged against {@code --peer-cacert} and the host
 * name against the certificate's subject alternative names. Never sends anything to etcd beyond a
 * TLS handshake.
 */
public final class PeerCertificateInspector {

  private final Optional<Path> peerCert;
  private final Optional<Path> peerCa;
  private final Duration timeout;
  private final Clock clock;

  public PeerCertificateInspector(
      Optional<Path> peerCert, Optional<Path> peerCa, Duration timeout, Clock clock) {
    this.peerCert = peerCert;
    this.peerCa = peerCa;
    this.timeout = timeout;
    this.clock = clock;
  }

  /** Reads both files once, so that a bad one stops the start with a clear message. */
  public void validateFiles() throws TlsFileException {
    if (peerCert.isPresent()) {
      PemFile.certificates(PemFile.read(peerCert.get(), "peer-cert"), "peer-cert", peerCert.get());
    }
    if (peerCa.isPresent()) {
      PemFile.certificates(PemFile.read(peerCa.get(), "peer-cacert"), "peer-cacert", peerCa.get());
    }
  }

  public PeerTlsFacts inspect(List<String> peerUrls) {
    List<PeerUrlFacts> facts = new ArrayList<>();
    for (String url : peerUrls) {
      facts.add(inspectOne(url));
    }
    return new PeerTlsFacts.Inspected(facts, clock.instant());
  }

  private PeerUrlFacts inspectOne(String url) {
    URI uri;
    try {
      uri = URI.create(url);
    } catch (IllegalArgumentException e) {
      return new PeerUrlFacts.Unavailable(url, "not a URL");
    }
    if (!"https".equalsIgnoreCase(uri.getScheme())) {
      return new PeerUrlFacts.Plain(url);
    }
    String host = uri.getHost();
    List<X509Certificate> cas;
    try {
      cas =
          peerCa.isPresent()
              ? PemFile.certificates(
                  PemFile.read(peerCa.get(), "peer-cacert"), "peer-cacert", peerCa.get())
              : List.of();
    } catch (TlsFileException e) {
      return new PeerUrlFacts.Unavailable(url, e.getMessage());
    }
    String dialFailure;
    try {
      return judge(url, host, "served", dial(host, uri.getPort()), cas);
    } catch (IOException | GeneralSecurityException e) {
      dialFailure = "dialling " + host + ":" + uri.getPort() + " failed: " + e.getMessage();
    }
    if (peerCert.isEmpty()) {
      return new PeerUrlFacts.Unavailable(url, dialFailure + "; no --peer-cert to read instead");
    }
    try {
      List<X509Certificate> chain =
          PemFile.certificates(
              PemFile.read(peerCert.get(), "peer-cert"), "peer-cert", peerCert.get());
      return judge(url, host, "--peer-cert", chain, cas);
    } catch (TlsFileException e) {
      return new PeerUrlFacts.Unavailable(url, dialFailure + "; " + e.getMessage());
    }
  }

  private PeerUrlFacts judge(
      String url,
      String host,
      String source,
      List<X509Certificate> chain,
      List<X509Certificate> cas) {
    X509Certificate leaf = chain.get(0);
    PeerUrlFacts.Trust trust = PeerUrlFacts.Trust.NO_CA;
    String detail = "";
    if (!cas.isEmpty()) {
      // Trust is judged at a moment inside the leaf's validity: whether the leaf has expired (or
      // is not yet valid) is the evaluator's call, against the poll's own clock. Judged at "now"
      // here, a certificate ending between the two clocks read as untrusted for one poll.
      Optional<String> why =
          CertificateJudge.untrustedBecause(chain, cas, Date.from(withinValidity(leaf)));
      trust = why.isPresent() ? PeerUrlFacts.Trust.UNTRUSTED : PeerUrlFacts.Trust.TRUSTED;
      detail = why.orElse("");
    }
    return new PeerUrlFacts.Inspected(
        url,
        source,
        leaf.getSubjectX500Principal().getName(),
        leaf.getNotBefore().toInstant(),
        leaf.getNotAfter().toInstant(),
        CertificateJudge.coversHost(leaf, host),
        trust,
        detail);
  }

  private java.time.Instant withinValidity(X509Certificate leaf) {
    java.time.Instant now = clock.instant();
    java.time.Instant from = leaf.getNotBefore().toInstant();
    java.time.Instant until = leaf.getNotAfter().toInstant();
    return now.isBefore(from) ? from : now.isAfter(until) ? until : now;
  }

  /** The chain the peer port serves, captured during the handshake whatever its outcome. */
  private List<X509Certificate> dial(String host, int port)
      throws IOException, GeneralSecurityException {
    AtomicReference<X509Certificate[]> served = new AtomicReference<>();
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, new TrustManager[] {new Capturing(served)}, null);
    int millis = (int) Math.max(1, timeout.toMillis());
    try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket()) {
      socket.connect(new InetSocketAddress(host, port), millis);
      socket.setSoTimeout(millis);
      if (!host.matches("[0-9.]+") && !host.contains(":")) {
        SSLParameters params = socket.getSSLParameters();
        params.setServerNames(List.of(new SNIHostName(host)));
        socket.setSSLParameters(params);
      }
      try {
        socket.startHandshake();
      } catch (IOException e) {
        if (served.get() == null) {
          throw e;
        }
      }
    }
    if (served.get() == null || served.get().length == 0) {
      throw new IOException("no certificate served");
    }
    return List.of(served.get());
  }

  /** Accepts any server chain and keeps it: the judging is done afterwards, and reported. */
  private record Capturing(AtomicReference<X509Certificate[]> served) implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {
      throw new UnsupportedOperationException("a client only");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {
      served.set(chain.clone());
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
