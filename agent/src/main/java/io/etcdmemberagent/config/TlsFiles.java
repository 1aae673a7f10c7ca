package io.etcdmemberagent.config;

import java.nio.file.Path;
import java.util.Optional;

/** PEM files for mutual TLS to etcd's client port; all empty means plain or server-only TLS. */
public record TlsFiles(Optional<Path> caCert, Optional<Path> cert, Optional<Path> key) {

  /** {@code --cacert}, {@code --cert}, {@code --key}: readable files; cert and key together. */
  static TlsFiles parse(FlagValues v) throws ConfigException {
    TlsFiles tls =
        new TlsFiles(v.readableFile("cacert"), v.readableFile("cert"), v.readableFile("key"));
    if (tls.cert().isPresent() != tls.key().isPresent()) {
      throw new ConfigException("--cert and --key must be given together");
    }
    return tls;
  }
}
