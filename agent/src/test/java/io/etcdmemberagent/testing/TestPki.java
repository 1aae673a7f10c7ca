package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority for tests, in Java (BouncyCastle), so certificates can have any validity
 * period (expired, not yet valid) and any host names: openssl 3.0's command line cannot back-date.
 */
public final class TestPki {

  /** PEM files of one issued certificate. */
  public record Issued(Path cert, Path key) {}

  private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

  private final Path dir;
  private final String name;
  private final KeyPair caKey;
  private final X509Certificate caCert;

  public TestPki(Path dir, String name) {
    this.dir = dir;
    this.name = name;
    this.caKey = ecKey();
    Instant now = Instant.now();
    try {
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              new X500Name("CN=" + name),
              BigInteger.valueOf(SERIAL.incrementAndGet()),
              Date.from(now.minus(Duration.ofDays(1))),
              Date.from(now.plus(Duration.ofDays(3650))),
              new X500Name("CN=" + name),
              caKey.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      b.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      this.caCert = sign(b, caKey);
      write(dir.resolve(name + "-ca.crt"), caCert);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public Path caCert() {
    return dir.resolve(name + "-ca.crt");
  }

  /** Valid from yesterday for a year, for 127.0.0.1 and localhost. */
  public Issued issue(String subject) {
    Instant now = Instant.now();
    return issue(
        subject,
        now.minus(Duration.ofDays(1)),
        now.plus(Duration.ofDays(365)),
        List.of("localhost"),
        List.of("127.0.0.1"));
  }

  public Issued issue(
      String subject, Instant notBefore, Instant notAfter, List<String> dns, List<String> ips) {
    return issue(new X500Name("CN=" + subject), subject, notBefore, notAfter, dns, ips);
  }

  /**
   * A client certificate for Kubernetes: {@code CN} is the user, {@code O} the group (e.g. {@code
   * system:masters}).
   */
  public Issued issueUser(String user, String group) {
    Instant now = Instant.now();
    return issue(
        new X500Name("O=" + group + ",CN=" + user),
        user,
        now.minus(Duration.ofDays(1)),
        now.plus(Duration.ofDays(365)),
        List.of(),
        List.of());
  }

  private Issued issue(
      X500Name subjectName,
      String subject,
      Instant notBefore,
      Instant notAfter,
      List<String> dns,
      List<String> ips) {
    KeyPair key = ecKey();
    try {
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              caCert,
              BigInteger.valueOf(SERIAL.incrementAndGet()),
              Date.from(notBefore),
              Date.from(notAfter),
              subjectName,
              key.getPublic());
      List<GeneralName> names = new ArrayList<>();
      dns.forEach(d -> names.add(new GeneralName(GeneralName.dNSName, d)));
      ips.forEach(i -> names.add(new GeneralName(GeneralName.iPAddress, i)));
      if (!names.isEmpty()) {
        b.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(names.toArray(GeneralName[]::new)));
      }
      b.addExtension(
          Extension.extendedKeyUsage,
          false,
          new ExtendedKeyUsage(
              new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
      b.addExtension(
          Extension.keyUsage,
          true,
          new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
      X509Certificate cert = sign(b, caKey);
      String file = name + "-" + subject + "-" + SERIAL.get();
      Issued issued = new Issued(dir.resolve(file + ".crt"), dir.resolve(file + ".key"));
      write(issued.cert(), cert);
      write(issued.key(), new JcaPKCS8Generator(key.getPrivate(), null).generate());
      return issued;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A fresh key pair as PEM files (PKCS#8 private, X.509 public): a token signing key. */
  public static void writeKeyPair(Path privateKey, Path publicKey) {
    KeyPair key = ecKey();
    try {
      write(privateKey, new JcaPKCS8Generator(key.getPrivate(), null).generate());
      write(publicKey, key.getPublic());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static KeyPair ecKey() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer) {
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(
              b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void write(Path file, Object pemObject) throws IOException {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter pem = new JcaPEMWriter(out)) {
      pem.writeObject(pemObject);
    }
    Files.writeString(file, out.toString());
  }
}
