package io.etcdmemberagent.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcdmemberagent.testing.TestCertificates;
import io.etcdmemberagent.testing.TestCertificates.KeyFormat;
import io.etcdmemberagent.testing.TestPki;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ClientTlsFilesTest {

  @TempDir static Path dir;
  static TestCertificates openssl;

  @BeforeAll
  static void ca() {
    openssl = new TestCertificates(dir);
  }

  static ClientTlsFiles files(Path ca, Path cert, Path key) {
    return new ClientTlsFiles(
        Optional.ofNullable(ca), Optional.ofNullable(cert), Optional.ofNullable(key));
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(KeyFormat.class)
  void readsEveryKeyFormatOperatorsUse(KeyFormat format) throws Exception {
    Path[] pair = openssl.issue("c-" + format.name().toLowerCase(), format);
    ClientTlsMaterial m = files(openssl.ca(), pair[0], pair[1]).load();
    assertThat(m.trusted()).hasSize(1);
    assertThat(m.chain()).hasSize(1);
    assertThat(m.key()).isPresent();
    assertThat(m.certificateSubject()).hasValueSatisfying(s -> assertThat(s).contains("CN=c-"));
    assertThat(m.certificateNotAfter()).isPresent();
  }

  @Test
  void aKeyOfAnotherCertificateIsRefusedNamingTheKey() {
    Path[] a = openssl.issue("pair-a", KeyFormat.SEC1_EC);
    Path[] b = openssl.issue("pair-b", KeyFormat.PKCS8_RSA);
    assertThatThrownBy(() -> files(null, a[0], b[1]).load())
        .isInstanceOf(TlsFileException.class)
        .hasMessageContaining("--key")
        .hasMessageContaining("does not belong to the certificate");
    Path[] c = openssl.issue("pair-c", KeyFormat.SEC1_EC);
    assertThatThrownBy(() -> files(null, a[0], c[1]).load())
        .hasMessageContaining("does not belong");
  }

  @Test
  void aKeyOfAnotherCertificateIsRefusedWithBouncyCastleRegisteredToo() {
    java.security.Provider bc = new org.bouncycastle.jce.provider.BouncyCastleProvider();
    boolean added = java.security.Security.addProvider(bc) != -1;
    try {
      Path[] a = openssl.issue("bc-a", KeyFormat.SEC1_EC);
      Path[] c = openssl.issue("bc-c", KeyFormat.SEC1_EC);
      assertThatThrownBy(() -> files(null, a[0], c[1]).load())
          .hasMessageContaining("does not belong");
    } finally {
      if (added) {
        java.security.Security.removeProvider(bc.getName());
      }
    }
  }

  @Test
  void malformedFilesNameTheirFlag() throws IOException {
    Path garbage = Files.writeString(dir.resolve("garbage.pem"), "not a certificate\n");
    Path[] good = openssl.issue("good", KeyFormat.SEC1_EC);
    assertThatThrownBy(() -> files(garbage, null, null).load())
        .hasMessageStartingWith("invalid value \"" + garbage + "\" for --cacert");
    assertThatThrownBy(() -> files(null, garbage, good[1]).load())
        .hasMessageContaining("for --cert");
    assertThatThrownBy(() -> files(null, good[0], garbage).load())
        .hasMessageContaining("for --key")
        .hasMessageContaining("no PEM private key");
    Path missing = dir.resolve("gone.pem");
    assertThatThrownBy(() -> files(missing, null, null).load())
        .hasMessageContaining("for --cacert: cannot read it");
  }

  @Test
  void theContentHashFollowsTheBytesBehindTheSymlink() throws Exception {
    TestPki pki = new TestPki(dir, "hash");
    TestPki.Issued one = pki.issue("one");
    TestPki.Issued two = pki.issue("two");
    Path link = dir.resolve("tls.crt");
    Path keyLink = dir.resolve("tls.key");
    Files.createSymbolicLink(link, one.cert());
    Files.createSymbolicLink(keyLink, one.key());
    ClientTlsFiles files = files(pki.caCert(), link, keyLink);
    String before = files.contentHash();
    assertThat(files.load().contentHash()).isEqualTo(before);
    Files.delete(link);
    Files.delete(keyLink);
    Files.createSymbolicLink(link, two.cert());
    Files.createSymbolicLink(keyLink, two.key());
    assertThat(files.contentHash()).isNotEqualTo(before);
    assertThat(files.load().certificateSubject())
        .hasValueSatisfying(s -> assertThat(s).contains("two"));
  }
}
