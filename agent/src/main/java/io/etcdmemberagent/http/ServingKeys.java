package io.etcdmemberagent.http;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * What HTTPS serves with: the certificate chain and its key, and the CAs whose client certificates
 * are accepted (empty: none asked for).
 */
public record ServingKeys(
    List<X509Certificate> chain, PrivateKey key, List<X509Certificate> clientCas) {

  public ServingKeys {
    chain = List.copyOf(chain);
    clientCas = List.copyOf(clientCas);
  }
}
