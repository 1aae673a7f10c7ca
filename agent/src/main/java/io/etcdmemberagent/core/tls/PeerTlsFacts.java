package io.etcdmemberagent.core.tls;

import java.time.Instant;
import java.util.List;

/** The peer-TLS probe's latest findings for this member's peer URLs from the live member list. */
public sealed interface PeerTlsFacts {

  /** This member's peer URLs are not known yet (no member list, or not in it). */
  record Unknown(String reason) implements PeerTlsFacts {}

  record Inspected(List<PeerUrlFacts> urls, Instant checkedAt) implements PeerTlsFacts {
    public Inspected {
      urls = List.copyOf(urls);
    }
  }
}
