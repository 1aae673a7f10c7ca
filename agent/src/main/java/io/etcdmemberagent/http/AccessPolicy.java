package io.etcdmemberagent.http;

import io.etcdmemberagent.core.access.AccessDecision;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Who may read {@code /metrics} and {@code /status}. {@code clientCertificate} is the subject of a
 * client certificate the TLS handshake verified, if the caller sent one.
 */
@FunctionalInterface
public interface AccessPolicy {

  AccessPolicy ANYONE =
      (path, verb, token, cert) -> new AccessDecision.Allowed("anonymous", "no access control");

  AccessDecision check(
      String path, String verb, Optional<String> bearerToken, Optional<String> clientCertificate);

  /**
   * As {@link #check}, for the server: a decision that needs a remote review completes later, on
   * the policy's own threads, so that no request thread waits for it (the probes share them).
   */
  default CompletableFuture<AccessDecision> decide(
      String path, String verb, Optional<String> bearerToken, Optional<String> clientCertificate) {
    return CompletableFuture.completedFuture(check(path, verb, bearerToken, clientCertificate));
  }
}
