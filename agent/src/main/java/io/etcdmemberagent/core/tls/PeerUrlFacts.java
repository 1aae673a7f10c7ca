package io.etcdmemberagent.core.tls;

import java.time.Instant;

/** What the peer-TLS probe found about one of this member's advertised peer URLs. */
public sealed interface PeerUrlFacts {

  String url();

  /** An {@code http://} peer URL: peer traffic is not encrypted. */
  record Plain(String url) implements PeerUrlFacts {}

  /**
   * An {@code https://} peer URL whose certificate was read, from {@code source} (the served
   * certificate when dialled, else {@code --peer-cert}). {@code trust} is how the chain compared
   * with {@code --peer-cacert}.
   */
  record Inspected(
      String url,
      String source,
      String subject,
      Instant notBefore,
      Instant notAfter,
      boolean hostMatches,
      Trust trust,
      String trustDetail)
      implements PeerUrlFacts {}

  /** An {@code https://} peer URL whose certificate could be neither dialled nor read. */
  record Unavailable(String url, String reason) implements PeerUrlFacts {}

  /** How a certificate chain compares with the configured peer CA. */
  enum Trust {
    TRUSTED,
    UNTRUSTED,
    /** No {@code --peer-cacert}: the chain is not judged. */
    NO_CA
  }
}
