package io.etcdmemberagent.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CertificateJudgeTest {

  @TempDir Path dir;

  static X509Certificate read(Path pem) throws Exception {
    try (var in = Files.newInputStream(pem)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  @Test
  void matchesHostsBySubjectAlternativeNames() throws Exception {
    TestPki pki = new TestPki(dir, "hosts");
    Instant now = Instant.now();
    X509Certificate cert =
        read(
            pki.issue(
                    "etcd-0",
                    now,
                    now.plus(Duration.ofDays(1)),
                    List.of("etcd-0.etcd.ns.svc", "*.etcd-peer.ns.svc"),
                    List.of("10.1.2.3"))
                .cert());
    assertThat(CertificateJudge.coversHost(cert, "etcd-0.etcd.ns.svc")).isTrue();
    assertThat(CertificateJudge.coversHost(cert, "ETCD-0.etcd.ns.svc")).isTrue();
    assertThat(CertificateJudge.coversHost(cert, "etcd-1.etcd-peer.ns.svc")).isTrue();
    assertThat(CertificateJudge.coversHost(cert, "a.b.etcd-peer.ns.svc")).isFalse();
    assertThat(CertificateJudge.coversHost(cert, "etcd-1.etcd.ns.svc")).isFalse();
    assertThat(CertificateJudge.coversHost(cert, "10.1.2.3")).isTrue();
    assertThat(CertificateJudge.coversHost(cert, "10.1.2.4")).isFalse();
  }

  @Test
  void judgesTheChainAgainstTheGivenCas() throws Exception {
    TestPki ours = new TestPki(dir, "ours");
    TestPki theirs = new TestPki(dir, "theirs");
    X509Certificate leaf = read(ours.issue("peer").cert());
    X509Certificate ca = read(ours.caCert());
    X509Certificate other = read(theirs.caCert());
    Date now = new Date();
    assertThat(CertificateJudge.untrustedBecause(List.of(leaf), List.of(ca), now)).isEmpty();
    assertThat(CertificateJudge.untrustedBecause(List.of(leaf, ca), List.of(ca), now)).isEmpty();
    assertThat(CertificateJudge.untrustedBecause(List.of(leaf), List.of(other), now)).isPresent();
    assertThat(CertificateJudge.untrustedBecause(List.of(leaf), List.of(other, ca), now)).isEmpty();
  }
}
