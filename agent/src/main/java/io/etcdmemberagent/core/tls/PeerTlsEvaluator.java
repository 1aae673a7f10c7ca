package io.etcdmemberagent.core.tls;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;

/**
 * Judges this member's peer URLs: every one https, its certificate within its validity period and
 * not within the warning window of its end, issued for the advertised host and, with a peer CA,
 * chaining to it. The first problem found names the reason. Pure.
 */
public final class PeerTlsEvaluator {

  public static final String CHECK = CheckNames.PEER_TLS;

  /** Reasons that mean "cannot tell" rather than "bad": the condition is then Unknown. */
  public static final Set<String> UNKNOWN_REASONS =
      Set.of("PeerUrlsUnknown", "CertificateUnavailable");

  private final PeerTlsPolicy policy;

  public PeerTlsEvaluator(PeerTlsPolicy policy) {
    this.policy = policy;
  }

  public PeerTlsPolicy policy() {
    return policy;
  }

  public Check check(PeerTlsFacts facts, Instant now) {
    if (facts instanceof PeerTlsFacts.Unknown u) {
      return Check.fail(
          CHECK, "PeerUrlsUnknown", "this member's peer URLs are unknown: " + u.reason());
    }
    PeerTlsFacts.Inspected inspected = (PeerTlsFacts.Inspected) facts;
    if (inspected.urls().isEmpty()) {
      return Check.fail(CHECK, "PeerUrlsUnknown", "this member advertises no peer URL");
    }
    boolean chainJudged = true;
    boolean plainByChoice = false;
    for (PeerUrlFacts url : inspected.urls()) {
      if (url instanceof PeerUrlFacts.Plain && !policy.required()) {
        plainByChoice = true;
        continue;
      }
      Check problem = problem(url, now);
      if (problem != null) {
        return problem;
      }
      chainJudged &=
          url instanceof PeerUrlFacts.Inspected i && i.trust() != PeerUrlFacts.Trust.NO_CA;
    }
    if (plainByChoice) {
      return Check.pass(
          CHECK,
          "PeerTlsNotRequired",
          "peer traffic is plain http by choice (--peer-tls-required=false); any https peer URL is"
              + " valid");
    }
    return Check.pass(
        CHECK,
        "PeerTlsValid",
        chainJudged
            ? "every peer URL is https with a valid certificate for its host"
            : "every peer URL is https with an unexpired certificate for its host"
                + " (chain not judged: no --peer-cacert)");
  }

  private Check problem(PeerUrlFacts url, Instant now) {
    if (url instanceof PeerUrlFacts.Plain p) {
      return Check.fail(CHECK, "PlainHttpPeerUrl", "peer URL " + p.url() + " is not https");
    }
    if (url instanceof PeerUrlFacts.Unavailable u) {
      return Check.fail(
          CHECK,
          "CertificateUnavailable",
          "the certificate of " + u.url() + " could not be read: " + u.reason());
    }
    return certificateProblem((PeerUrlFacts.Inspected) url, now);
  }

  private Check certificateProblem(PeerUrlFacts.Inspected c, Instant now) {
    String which = "the certificate of " + c.url() + " (" + c.source() + ")";
    if (now.isAfter(c.notAfter())) {
      return Check.fail(CHECK, "CertificateExpired", which + " expired at " + c.notAfter());
    }
    if (now.isBefore(c.notBefore())) {
      return Check.fail(
          CHECK, "CertificateNotYetValid", which + " is valid only from " + c.notBefore());
    }
    if (c.trust() == PeerUrlFacts.Trust.UNTRUSTED) {
      return Check.fail(
          CHECK,
          "CertificateUntrusted",
          which + " does not chain to --peer-cacert: " + c.trustDetail());
    }
    if (!c.hostMatches()) {
      return Check.fail(
          CHECK, "CertificateHostMismatch", which + " does not cover the advertised host");
    }
    Duration left = Duration.between(now, c.notAfter());
    if (left.compareTo(policy.expiryWarning()) < 0) {
      return Check.fail(
          CHECK,
          "CertificateExpiresSoon",
          which + " expires at " + c.notAfter() + ", within --cert-expiry-warning");
    }
    return null;
  }
}
