package io.etcdmemberagent.core.tls;

import java.time.Duration;
import java.time.Instant;

/**
 * When a certificate the agent issued is renewed: once two thirds of its validity have passed (a
 * year's certificate after eight months), so a renewal that fails has months to be noticed.
 */
public final class CertificateRenewal {

  private CertificateRenewal() {}

  public static boolean due(Instant notBefore, Instant notAfter, Instant now) {
    Duration life = Duration.between(notBefore, notAfter);
    if (life.isNegative() || life.isZero()) {
      return true;
    }
    return !now.isBefore(notBefore.plus(life.multipliedBy(2).dividedBy(3)));
  }
}
