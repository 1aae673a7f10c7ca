package io.etcdmemberagent.tls;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateParsingException;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/** Whether a certificate covers a host name, and whether its chain leads to given CAs. */
final class CertificateJudge {

  private static final int DNS_NAME = 2;
  private static final int IP_ADDRESS = 7;

  private CertificateJudge() {}

  /** Subject alternative names only, as TLS clients (and etcd's peers) check them today. */
  static boolean coversHost(X509Certificate cert, String host) {
    Collection<List<?>> names;
    try {
      names = cert.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      return false;
    }
    if (names == null) {
      return false;
    }
    boolean ipLiteral = host.matches("[0-9.]+") || host.contains(":");
    String wanted = host.toLowerCase(Locale.ROOT);
    for (List<?> name : names) {
      int type = (Integer) name.get(0);
      String value = String.valueOf(name.get(1)).toLowerCase(Locale.ROOT);
      if (ipLiteral && type == IP_ADDRESS && sameAddress(value, wanted)) {
        return true;
      }
      if (!ipLiteral && type == DNS_NAME && dnsMatches(value, wanted)) {
        return true;
      }
    }
    return false;
  }

  private static boolean sameAddress(String a, String b) {
    try {
      return InetAddress.getByName(a).equals(InetAddress.getByName(b.replaceAll("[\\[\\]]", "")));
    } catch (UnknownHostException e) {
      return false;
    }
  }

  private static boolean dnsMatches(String pattern, String host) {
    if (pattern.startsWith("*.")) {
      int dot = host.indexOf('.');
      return dot > 0 && host.substring(dot).equals(pattern.substring(1));
    }
    return pattern.equals(host);
  }

  /**
   * Empty when {@code chain} (leaf first) leads to one of {@code cas}, judged at {@code at}; else
   * why not.
   */
  static java.util.Optional<String> untrustedBecause(
      List<X509Certificate> chain, List<X509Certificate> cas, Date at) {
    Set<TrustAnchor> anchors =
        cas.stream().map(ca -> new TrustAnchor(ca, null)).collect(Collectors.toSet());
    List<X509Certificate> path = new ArrayList<>(chain);
    path.removeIf(cas::contains);
    if (path.isEmpty()) {
      return java.util.Optional.empty();
    }
    try {
      PKIXParameters params = new PKIXParameters(anchors);
      params.setRevocationEnabled(false);
      params.setDate(at);
      CertPathValidator.getInstance("PKIX")
          .validate(CertificateFactory.getInstance("X.509").generateCertPath(path), params);
      return java.util.Optional.empty();
    } catch (GeneralSecurityException e) {
      return java.util.Optional.of(String.valueOf(e.getMessage()));
    }
  }
}
