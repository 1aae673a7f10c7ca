package io.etcdmemberagent.core.tls;

import java.time.Duration;

/**
 * The peer-TLS check's limits: a certificate within {@code expiryWarning} of its end fails; {@code
 * gatesReadiness} says whether a failing check makes the member not ready; {@code required} false
 * means plain-http peer URLs are the operator's choice, not a problem (an https one is still
 * judged).
 */
public record PeerTlsPolicy(Duration expiryWarning, boolean gatesReadiness, boolean required) {

  public PeerTlsPolicy(Duration expiryWarning, boolean gatesReadiness) {
    this(expiryWarning, gatesReadiness, true);
  }
}
