package io.etcdmemberagent.config;

import java.nio.file.Path;
import java.util.Optional;

/** PEM files for mutual TLS to etcd's client port; all empty means plain or server-only TLS. */
public record TlsFiles(Optional<Path> caCert, Optional<Path> cert, Optional<Path> key) {

  public static TlsFiles none() {
    return new TlsFiles(Optional.empty(), Optional.empty(), Optional.empty());
  }

  public boolean any() {
    return caCert.isPresent() || cert.isPresent();
  }
}
