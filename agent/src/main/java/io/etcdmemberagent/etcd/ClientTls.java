package io.etcdmemberagent.etcd;

import java.nio.file.Path;
import java.util.Optional;

/** PEM files for TLS to etcd client ports: CA bundle, and a client certificate with its key. */
public record ClientTls(Optional<Path> caCert, Optional<Path> cert, Optional<Path> key) {}
