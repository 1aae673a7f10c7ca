package io.etcdmemberagent.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcdmemberagent.tls.ClusterCa.IssuedPem;
import io.etcdmemberagent.tls.ClusterCa.Usage;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterCaTest {

  static X509Certificate cert(String pem) throws Exception {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
  }

  @Test
  void issuesPeerServerAndClientCertificatesForTheirNamesAndPurposes() throws Exception {
    ClusterCa ca = ClusterCa.create("etcd-ca", Duration.ofDays(3650));
    IssuedPem peer =
        ca.issue(
            Usage.PEER,
            "etcd-0",
            List.of("etcd-0.etcd-peer.ns.svc"),
            List.of(),
            Duration.ofDays(365));
    X509Certificate p = cert(peer.certPem());
    p.verify(cert(ca.signerPem()).getPublicKey());
    assertThat(p.getSubjectAlternativeNames())
        .extracting(n -> (Object) n.get(1))
        .containsExactly("etcd-0.etcd-peer.ns.svc");
    assertThat(p.getExtendedKeyUsage())
        .as("a peer serves and dials with one certificate")
        .containsExactlyInAnyOrder("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2");
    assertThat(p.getBasicConstraints()).as("not a CA").isEqualTo(-1);
    X509Certificate server =
        cert(
            ca.issue(
                    Usage.SERVER,
                    "etcd-0",
                    List.of("localhost"),
                    List.of("127.0.0.1"),
                    Duration.ofDays(365))
                .certPem());
    assertThat(server.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1");
    assertThat(server.getSubjectAlternativeNames())
        .extracting(n -> (Object) n.get(1))
        .containsExactlyInAnyOrder("localhost", "127.0.0.1");
    X509Certificate client =
        cert(
            ca.issue(Usage.CLIENT, "etcd-client", List.of(), List.of(), Duration.ofDays(365))
                .certPem());
    assertThat(client.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2");
    assertThat(client.getSubjectX500Principal().getName()).isEqualTo("CN=etcd-client");
    assertThat(Duration.between(Instant.now(), client.getNotAfter().toInstant()).toDays())
        .isBetween(364L, 365L);
  }

  @Test
  void aCaReadBackFromItsSecretIssuesWhatTheOriginalTrusts() throws Exception {
    ClusterCa created = ClusterCa.create("etcd-ca", Duration.ofDays(3650));
    ClusterCa read = ClusterCa.parse(created.signerPem(), created.keyPem(), "Secret etcd-ca");
    IssuedPem issued = read.issue(Usage.CLIENT, "x", List.of(), List.of(), Duration.ofDays(30));
    assertThat(created.signed(issued.certPem())).isTrue();
    assertThat(read.trustBundlePem()).isEqualTo(created.signerPem());
  }

  /**
   * A rotation: ca.crt holds the old and the new CA. Members trust both, and the signer is the one
   * whose certificate matches ca.key, wherever it stands in the bundle.
   */
  @Test
  void duringARotationBothCasAreTrustedAndTheKeyChoosesTheSigner() throws Exception {
    ClusterCa oldCa = ClusterCa.create("old", Duration.ofDays(3650));
    ClusterCa newCa = ClusterCa.create("new", Duration.ofDays(3650));
    String bundle = oldCa.signerPem() + newCa.signerPem();

    ClusterCa stillOld = ClusterCa.parse(bundle, oldCa.keyPem(), "Secret etcd-ca");
    IssuedPem a = stillOld.issue(Usage.CLIENT, "a", List.of(), List.of(), Duration.ofDays(30));
    assertThat(oldCa.signed(a.certPem())).isTrue();
    assertThat(stillOld.trustBundlePem())
        .as("both CAs trusted, the signer first")
        .isEqualTo(oldCa.signerPem() + newCa.signerPem());

    ClusterCa switched = ClusterCa.parse(bundle, newCa.keyPem(), "Secret etcd-ca");
    IssuedPem b = switched.issue(Usage.CLIENT, "b", List.of(), List.of(), Duration.ofDays(30));
    assertThat(newCa.signed(b.certPem())).isTrue();
    assertThat(oldCa.signed(b.certPem())).isFalse();
    assertThat(switched.signed(a.certPem()))
        .as("a certificate of the old signer is due for reissue")
        .isFalse();
    assertThat(switched.trustBundlePem()).isEqualTo(newCa.signerPem() + oldCa.signerPem());
  }

  @Test
  void aKeyThatMatchesNoCaInTheBundleIsRefusedNamingTheSecret() {
    ClusterCa one = ClusterCa.create("one", Duration.ofDays(3650));
    ClusterCa other = ClusterCa.create("other", Duration.ofDays(3650));
    assertThatThrownBy(() -> ClusterCa.parse(one.signerPem(), other.keyPem(), "Secret etcd-ca"))
        .isInstanceOf(TlsFileException.class)
        .hasMessageContaining("Secret etcd-ca")
        .hasMessageContaining("matches ca.key");
    assertThatThrownBy(() -> ClusterCa.parse("not pem", one.keyPem(), "Secret etcd-ca"))
        .isInstanceOf(TlsFileException.class)
        .hasMessageContaining("Secret etcd-ca");
  }

  @Test
  void noCertificateOutlivesItsCa() throws Exception {
    ClusterCa ca = ClusterCa.create("short", Duration.ofDays(10));
    X509Certificate c =
        cert(ca.issue(Usage.PEER, "m", List.of("m"), List.of(), Duration.ofDays(365)).certPem());
    assertThat(c.getNotAfter()).isEqualTo(cert(ca.signerPem()).getNotAfter());
  }
}
