package io.etcdmemberagent.tls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMException;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;

/**
 * Parses the PEM an operator's TLS files hold: certificate bundles, and private keys as PKCS#8
 * ({@code PRIVATE KEY}), PKCS#1 RSA ({@code RSA PRIVATE KEY}) or SEC1 EC ({@code EC PRIVATE KEY}).
 * Errors name the flag and the file.
 */
final class PemFile {

  private PemFile() {}

  static List<X509Certificate> certificates(byte[] pem, String flag, Path file)
      throws TlsFileException {
    try {
      List<X509Certificate> certs = new ArrayList<>();
      for (var c :
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(pem))) {
        certs.add((X509Certificate) c);
      }
      if (certs.isEmpty()) {
        throw new TlsFileException(problem(flag, file, "no PEM certificate in it"));
      }
      return List.copyOf(certs);
    } catch (CertificateException e) {
      throw new TlsFileException(
          problem(flag, file, "not a PEM certificate (" + e.getMessage() + ")"));
    }
  }

  static PrivateKey privateKey(byte[] pem, String flag, Path file) throws TlsFileException {
    try (Reader reader =
            new InputStreamReader(new ByteArrayInputStream(pem), StandardCharsets.US_ASCII);
        PEMParser parser = new PEMParser(reader)) {
      JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
      for (Object o = parser.readObject(); o != null; o = parser.readObject()) {
        if (o instanceof PrivateKeyInfo info) {
          return converter.getPrivateKey(info);
        }
        if (o instanceof PEMKeyPair pair) {
          return converter.getPrivateKey(pair.getPrivateKeyInfo());
        }
        if (o instanceof PKCS8EncryptedPrivateKeyInfo) {
          throw new TlsFileException(
              problem(flag, file, "the key is encrypted; give an unencrypted PEM key"));
        }
      }
      throw new TlsFileException(
          problem(flag, file, "no PEM private key in it (PKCS#8, PKCS#1 RSA or EC)"));
    } catch (PEMException e) {
      throw new TlsFileException(
          problem(flag, file, "not a usable PEM key (" + e.getMessage() + ")"));
    } catch (IOException | RuntimeException e) {
      throw new TlsFileException(problem(flag, file, "not a PEM key (" + e.getMessage() + ")"));
    }
  }

  static byte[] read(Path file, String flag) throws TlsFileException {
    try {
      return java.nio.file.Files.readAllBytes(file);
    } catch (IOException e) {
      throw new TlsFileException(problem(flag, file, "cannot read it (" + e + ")"));
    }
  }

  static String problem(String flag, Path file, String what) {
    return "invalid value \"" + file + "\" for --" + flag + ": " + what;
  }
}
