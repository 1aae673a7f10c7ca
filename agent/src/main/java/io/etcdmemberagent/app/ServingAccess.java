package io.etcdmemberagent.app;

import io.etcdmemberagent.core.access.AccessDecision;
import io.etcdmemberagent.core.access.AccessGate;
import io.etcdmemberagent.http.AccessPolicy;
import io.etcdmemberagent.support.EventLog;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Who may read /metrics and /status: a caller whose client certificate the handshake verified
 * against {@code --https-client-ca-file}; with {@code --authz=kube}, a caller the API server
 * authorizes; with neither flag, anyone. The Kubernetes gate is set once the client is wired; until
 * then a token caller gets 503, never a guess.
 */
final class ServingAccess implements AccessPolicy {

  private final boolean clientCertificates;
  private final boolean kube;
  private final Clock clock;
  private volatile AccessGate gate;
  private volatile String lastFailure = "";
  private final ReviewLane lane = new ReviewLane();

  ServingAccess(boolean clientCertificates, boolean kube, Clock clock) {
    this.clientCertificates = clientCertificates;
    this.kube = kube;
    this.clock = clock;
  }

  void use(AccessGate kubeGate) {
    this.gate = kubeGate;
  }

  /** For /status. */
  String mode() {
    if (kube) {
      return clientCertificates ? "kube or client certificate" : "kube";
    }
    return clientCertificates ? "client certificate" : "anyone";
  }

  @Override
  public AccessDecision check(
      String path, String verb, Optional<String> bearerToken, Optional<String> clientCertificate) {
    if (clientCertificate.isPresent()) {
      // only a certificate that chains to --https-client-ca-file gets past the handshake
      return new AccessDecision.Allowed(clientCertificate.get(), "a verified client certificate");
    }
    if (kube) {
      AccessGate g = gate;
      AccessDecision d =
          g == null
              ? new AccessDecision.Unavailable("the agent is starting; ask again")
              : g.decide(bearerToken, path, verb, clock.instant());
      report(d);
      return d;
    }
    if (clientCertificates) {
      return new AccessDecision.Unauthenticated(
          "a client certificate signed by --https-client-ca-file is required");
    }
    return new AccessDecision.Allowed("anonymous", "no access control");
  }

  /**
   * A decision the caches hold is given at once; one that must ask the API server goes to the
   * {@link ReviewLane}, so that no request thread waits for it.
   */
  @Override
  public CompletableFuture<AccessDecision> decide(
      String path, String verb, Optional<String> bearerToken, Optional<String> clientCertificate) {
    AccessGate g = gate;
    if (!kube || g == null || clientCertificate.isPresent() || bearerToken.isEmpty()) {
      return CompletableFuture.completedFuture(check(path, verb, bearerToken, clientCertificate));
    }
    Optional<AccessDecision> known = g.cached(bearerToken, path, verb, clock.instant());
    if (known.isPresent()) {
      report(known.get());
      return CompletableFuture.completedFuture(known.get());
    }
    return lane.review(
        fingerprint(bearerToken.get()) + "|" + verb + "|" + path,
        () -> check(path, verb, bearerToken, clientCertificate));
  }

  /** A review that failed is logged once per distinct problem, and again after a success. */
  private void report(AccessDecision d) {
    if (d instanceof AccessDecision.Unavailable u) {
      if (!u.detail().equals(lastFailure)) {
        lastFailure = u.detail();
        EventLog.warn("access-review-failed", "detail", u.detail());
      }
    } else if (!lastFailure.isEmpty()) {
      lastFailure = "";
      EventLog.info("access-review-recovered");
    }
  }

  /** What the gate keeps of a token. */
  static String fingerprint(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
