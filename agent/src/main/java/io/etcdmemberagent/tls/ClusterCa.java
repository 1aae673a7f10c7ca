package io.etcdmemberagent.tls;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
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
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The cluster's certificate authority as the chart generates it (ECDSA P-256): created once, kept
 * by the caller in a Secret, and used to issue each member's certificates when its Pod starts.
 *
 * <p>The trust bundle may hold several CA certificates (a rotation trusts the old and the new one
 * for a while); the signer is the one whose public key matches the key.
 */
public final class ClusterCa {

  /** What a leaf certificate is for. */
  public enum Usage {
    /** etcd's peer port: it serves and it dials, with the same certificate. */
    PEER,
    /** etcd's client port. */
    SERVER,
    /** a client of etcd: the agent, join, an application. */
    CLIENT
  }

  /** A certificate and its key, as PEM text. */
  public record IssuedPem(String certPem, String keyPem) {}

  private static final SecureRandom RANDOM = new SecureRandom();

  private final List<X509Certificate> trusted;
  private final X509Certificate signer;
  private final PrivateKey key;

  private ClusterCa(List<X509Certificate> trusted, X509Certificate signer, PrivateKey key) {
    this.trusted = List.copyOf(trusted);
    this.signer = signer;
    this.key = key;
  }

  /** A new CA named {@code commonName}, valid from an hour ago for {@code validity}. */
  public static ClusterCa create(String commonName, Duration validity) {
    KeyPair pair = ecKey();
    Instant now = Instant.now();
    X500Name name = new X500Name("CN=" + commonName);
    try {
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              name,
              serial(),
              Date.from(now.minus(Duration.ofHours(1))),
              Date.from(now.plus(validity)),
              name,
              pair.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
      b.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      b.addExtension(
          Extension.subjectKeyIdentifier,
          false,
          new JcaX509ExtensionUtils().createSubjectKeyIdentifier(pair.getPublic()));
      X509Certificate cert = sign(b, pair.getPrivate());
      return new ClusterCa(List.of(cert), cert, pair.getPrivate());
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot create a CA certificate: " + e, e);
    }
  }

  /**
   * The CA kept in {@code where} (a Secret's name, for messages): its {@code ca.crt} (one or more
   * CA certificates) and {@code ca.key}. Refused when no certificate matches the key.
   */
  public static ClusterCa parse(String bundlePem, String keyPem, String where)
      throws TlsFileException {
    Path source = Path.of(where);
    List<X509Certificate> certs =
        PemFile.certificates(bundlePem.getBytes(StandardCharsets.US_ASCII), "ca-secret", source);
    PrivateKey key =
        PemFile.privateKey(keyPem.getBytes(StandardCharsets.US_ASCII), "ca-secret", source);
    for (X509Certificate c : certs) {
      if (matches(c, key) && c.getBasicConstraints() >= 0) {
        return new ClusterCa(certs, c, key);
      }
    }
    throw new TlsFileException(
        PemFile.problem(
            "ca-secret", source, "no CA certificate in ca.crt matches ca.key (the signer)"));
  }

  /** Every trusted CA certificate, the signer first. */
  public String trustBundlePem() {
    List<X509Certificate> ordered = new ArrayList<>();
    ordered.add(signer);
    trusted.stream().filter(c -> !c.equals(signer)).forEach(ordered::add);
    StringBuilder out = new StringBuilder();
    for (X509Certificate c : ordered) {
      out.append(pem(c));
    }
    return out.toString();
  }

  /** The signer certificate alone (what a new CA Secret's ca.crt holds). */
  public String signerPem() {
    return pem(signer);
  }

  /** The signer's key as PKCS#8 PEM. */
  public String keyPem() {
    return pkcs8(key);
  }

  private static String pkcs8(PrivateKey k) {
    try {
      return pem(new JcaPKCS8Generator(k, null).generate());
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode a key: " + e, e);
    }
  }

  /**
   * A certificate for {@code usage}, subject {@code commonName}, for {@code dnsNames} and {@code
   * ipAddresses}, valid from an hour ago (clocks differ) for {@code validity}, or less when the CA
   * ends sooner.
   */
  public IssuedPem issue(
      Usage usage,
      String commonName,
      List<String> dnsNames,
      List<String> ipAddresses,
      Duration validity) {
    KeyPair pair = ecKey();
    Instant now = Instant.now();
    Instant end = now.plus(validity);
    if (end.isAfter(signer.getNotAfter().toInstant())) {
      end = signer.getNotAfter().toInstant();
    }
    try {
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
              signer,
              serial(),
              Date.from(now.minus(Duration.ofHours(1))),
              Date.from(end),
              new X500Name("CN=" + commonName),
              pair.getPublic());
      List<GeneralName> names = new ArrayList<>();
      dnsNames.forEach(d -> names.add(new GeneralName(GeneralName.dNSName, d)));
      ipAddresses.forEach(i -> names.add(new GeneralName(GeneralName.iPAddress, i)));
      if (!names.isEmpty()) {
        b.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(names.toArray(GeneralName[]::new)));
      }
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purposes(usage)));
      b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
      b.addExtension(
          Extension.authorityKeyIdentifier,
          false,
          new JcaX509ExtensionUtils().createAuthorityKeyIdentifier(signer));
      X509Certificate cert = sign(b, key);
      return new IssuedPem(pem(cert), pkcs8(pair.getPrivate()));
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot issue a certificate: " + e, e);
    }
  }

  /** True when {@code certPem}'s first certificate was signed by this CA's signer. */
  public boolean signed(String certPem) {
    try {
      X509Certificate c = first(certPem);
      c.verify(signer.getPublicKey());
      return true;
    } catch (TlsFileException | GeneralSecurityException e) {
      return false;
    }
  }

  /** The end of {@code certPem}'s first certificate. */
  public static Instant notAfter(String certPem) throws TlsFileException {
    return first(certPem).getNotAfter().toInstant();
  }

  /** The start of {@code certPem}'s first certificate. */
  public static Instant notBefore(String certPem) throws TlsFileException {
    return first(certPem).getNotBefore().toInstant();
  }

  private static X509Certificate first(String certPem) throws TlsFileException {
    return PemFile.certificates(
            certPem.getBytes(StandardCharsets.US_ASCII), "ca-secret", Path.of("certificate"))
        .get(0);
  }

  private static KeyPurposeId[] purposes(Usage usage) {
    return switch (usage) {
      case PEER ->
          new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth};
      case SERVER -> new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth};
      case CLIENT -> new KeyPurposeId[] {KeyPurposeId.id_kp_clientAuth};
    };
  }

  private static boolean matches(X509Certificate cert, PrivateKey key) {
    try {
      byte[] probe = "etcd-member-agent".getBytes(StandardCharsets.US_ASCII);
      java.security.Signature s = java.security.Signature.getInstance(signatureAlgorithm(key));
      s.initSign(key);
      s.update(probe);
      byte[] signature = s.sign();
      java.security.Signature v = java.security.Signature.getInstance(signatureAlgorithm(key));
      v.initVerify(cert.getPublicKey());
      v.update(probe);
      return v.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static String signatureAlgorithm(PrivateKey key) {
    return key.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
  }

  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
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

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey signerKey) {
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(
              b.build(new JcaContentSignerBuilder(signatureAlgorithm(signerKey)).build(signerKey)));
    } catch (Exception e) {
      throw new IllegalStateException("cannot sign a certificate: " + e, e);
    }
  }

  private static String pem(Object o) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(out)) {
      w.writeObject(o);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return out.toString();
  }

  @Override
  public String toString() {
    return "ClusterCa[" + signer.getSubjectX500Principal() + ", trusted " + trusted.size() + "]";
  }
}
