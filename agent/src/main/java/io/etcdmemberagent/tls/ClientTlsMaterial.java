package io.etcdmemberagent.tls;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The parsed contents of {@code --cacert}, {@code --cert} and {@code --key}: the CA bundle to trust
 * (empty: the JVM's defaults), the client certificate chain and its key (empty: no client auth),
 * and a SHA-256 of the three files' bytes.
 */
public record ClientTlsMaterial(
    List<X509Certificate> trusted,
    List<X509Certificate> chain,
    Optional<PrivateKey> key,
    String contentHash) {

  public ClientTlsMaterial {
    trusted = List.copyOf(trusted);
    chain = List.copyOf(chain);
  }

  /** When the client certificate stops being valid, if there is one. */
  public Optional<Instant> certificateNotAfter() {
    return chain.isEmpty() ? Optional.empty() : Optional.of(chain.get(0).getNotAfter().toInstant());
  }

  public Optional<String> certificateSubject() {
    return chain.isEmpty()
        ? Optional.empty()
        : Optional.of(chain.get(0).getSubjectX500Principal().getName());
  }
}
