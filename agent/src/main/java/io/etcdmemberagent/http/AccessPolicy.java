package io.etcdmemberagent.http;

import io.etcdmemberagent.core.AccessDecision;
import java.util.Optional;

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
}
