package io.etcdmemberagent.etcd;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;

/**
 * TLS to etcd client ports: CAs to trust (empty: the JVM's defaults), and a client certificate
 * chain with its key (empty: no client certificate).
 */
public record ClientTls(
    List<X509Certificate> trusted, List<X509Certificate> chain, Optional<PrivateKey> key) {

  public ClientTls {
    trusted = List.copyOf(trusted);
    chain = List.copyOf(chain);
  }

  public static ClientTls none() {
    return new ClientTls(List.of(), List.of(), Optional.empty());
  }
}
