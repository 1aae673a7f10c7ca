package io.etcdmemberagent.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The peer-TLS check and client certificate rotation: the peer certificate and CA files, the
 * warning window before a certificate's end, how often client TLS files are re-read and peer
 * certificates inspected, whether a failing peer-TLS check makes the member not ready, and whether
 * peer TLS is required at all.
 */
public record PeerTlsSettings(
    Optional<Path> peerCert,
    Optional<Path> peerCaCert,
    Duration certExpiryWarning,
    Duration tlsReloadInterval,
    Duration peerCheckInterval,
    boolean gatesReadiness,
    boolean required) {}
