package io.etcdmemberagent.tls;

import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Reads a CA bundle, a certificate and its key as one unit: the etcd client's {@code --cacert},
 * {@code --cert} and {@code --key}, or the HTTPS server's {@code --https-client-ca-file}, {@code
 * --https-cert-file} and {@code --https-key-file}. The files are read each time in full through
 * their paths, so a Kubernetes Secret volume's {@code ..data} symlink swap is seen; the key must
 * belong to the certificate, so a half-rotated pair is refused rather than used.
 */
public final class ClientTlsFiles {

  private static final byte[] PROBE = "etcd-member-agent key pair check".getBytes();

  private final Optional<Path> caCert;
  private final Optional<Path> cert;
  private final Optional<Path> key;
  private final String caFlag;
  private final String certFlag;
  private final String keyFlag;

  /** The etcd client's files. */
  public ClientTlsFiles(Optional<Path> caCert, Optional<Path> cert, Optional<Path> key) {
    this(caCert, cert, key, "cacert", "cert", "key");
  }

  /** Files given by the flags named (without dashes), which errors name. */
  public ClientTlsFiles(
      Optional<Path> caCert,
      Optional<Path> cert,
      Optional<Path> key,
      String caFlag,
      String certFlag,
      String keyFlag) {
    this.caCert = caCert;
    this.cert = cert;
    this.key = key;
    this.caFlag = caFlag;
    this.certFlag = certFlag;
    this.keyFlag = keyFlag;
  }

  public boolean any() {
    return caCert.isPresent() || cert.isPresent();
  }

  /** The SHA-256 of the files' current bytes, to notice a change cheaply. */
  public String contentHash() throws TlsFileException {
    return hash(readAll());
  }

  /** Reads and checks all three files now. */
  public ClientTlsMaterial load() throws TlsFileException {
    byte[][] bytes = readAll();
    List<X509Certificate> trusted =
        bytes[0] == null ? List.of() : PemFile.certificates(bytes[0], caFlag, caCert.get());
    List<X509Certificate> chain =
        bytes[1] == null ? List.of() : PemFile.certificates(bytes[1], certFlag, cert.get());
    Optional<PrivateKey> privateKey =
        bytes[2] == null
            ? Optional.empty()
            : Optional.of(PemFile.privateKey(bytes[2], keyFlag, key.get()));
    if (privateKey.isPresent() && !chain.isEmpty()) {
      requirePair(chain.get(0).getPublicKey(), privateKey.get());
    }
    return new ClientTlsMaterial(trusted, chain, privateKey, hash(bytes));
  }

  private byte[][] readAll() throws TlsFileException {
    return new byte[][] {read(caCert, caFlag), read(cert, certFlag), read(key, keyFlag)};
  }

  private static String hash(byte[][] files) {
    MessageDigest digest = sha256();
    for (byte[] b : files) {
      digest.update(b == null ? new byte[0] : b);
      digest.update((byte) 0);
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  private void requirePair(PublicKey publicKey, PrivateKey privateKey) throws TlsFileException {
    String algorithm =
        switch (privateKey.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          // BouncyCastle names EC keys "ECDSA" once its provider is registered (client-java's
          // SSLUtils registers every provider it finds when the kubeconfig has a client cert)
          case "EC", "ECDSA" -> "SHA256withECDSA";
          case "Ed25519", "EdDSA" -> "Ed25519";
          default -> null;
        };
    if (algorithm == null) {
      return; // an unusual key type: the TLS handshake will tell
    }
    try {
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(privateKey);
      signer.update(PROBE);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(publicKey);
      verifier.update(PROBE);
      if (verifier.verify(signature)) {
        return;
      }
    } catch (GeneralSecurityException e) {
      // a key of another type than the certificate's: not a pair
    }
    throw new TlsFileException(
        PemFile.problem(
            keyFlag,
            key.get(),
            "it does not belong to the certificate in --" + certFlag + " " + cert.get()));
  }

  private static byte[] read(Optional<Path> file, String flag) throws TlsFileException {
    if (file.isEmpty()) {
      return null;
    }
    return PemFile.read(file.get(), flag);
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
