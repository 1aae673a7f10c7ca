package io.etcdmemberagent.core;

import java.time.Duration;

/**
 * The peer-TLS check's limits: a certificate within {@code expiryWarning} of its end fails; {@code
 * gatesReadiness} says whether a failing check makes the member not ready.
 */
public record PeerTlsPolicy(Duration expiryWarning, boolean gatesReadiness) {}
