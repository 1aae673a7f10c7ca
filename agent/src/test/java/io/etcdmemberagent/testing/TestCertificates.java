package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Certificates made with openssl for TLS tests: a CA, server and client certificates. */
public final class TestCertificates {

  private final Path dir;

  public TestCertificates(Path dir) {
    this.dir = dir;
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key");
    openssl(
        "req",
        "-x509",
        "-new",
        "-key",
        "ca.key",
        "-subj",
        "/CN=test-ca",
        "-days",
        "2",
        "-out",
        "ca.crt");
  }

  public Path ca() {
    return dir.resolve("ca.crt");
  }

  /** The key formats an operator's files come in. */
  public enum KeyFormat {
    PKCS8_RSA,
    PKCS1_RSA,
    SEC1_EC
  }

  /**
   * A certificate signed by the CA, for {@code 127.0.0.1} and {@code localhost}; returns [cert,
   * key].
   */
  public Path[] issue(String name, KeyFormat format) {
    String key = name + ".key";
    switch (format) {
      case PKCS8_RSA ->
          openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key);
      case PKCS1_RSA -> openssl("genrsa", "-traditional", "-out", key, "2048");
      case SEC1_EC -> openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key);
    }
    write(
        name + ".ext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n");
    openssl("req", "-new", "-key", key, "-subj", "/CN=" + name, "-out", name + ".csr");
    openssl(
        "x509",
        "-req",
        "-in",
        name + ".csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        name + ".ext",
        "-out",
        name + ".crt");
    return new Path[] {dir.resolve(name + ".crt"), dir.resolve(key)};
  }

  private void write(String file, String text) {
    try {
      Files.writeString(dir.resolve(file), text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void openssl(String... args) {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    try {
      Process p =
          new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
