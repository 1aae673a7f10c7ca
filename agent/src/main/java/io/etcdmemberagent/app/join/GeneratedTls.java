package io.etcdmemberagent.app.join;

import io.etcdmemberagent.config.GeneratedTlsSettings;
import io.etcdmemberagent.core.tls.CertificateRenewal;
import io.etcdmemberagent.kube.ClientJavaSecretApi;
import io.etcdmemberagent.kube.ClientJavaSecretApi.SecretCallException;
import io.etcdmemberagent.kube.ClientJavaSecretApi.SecretData;
import io.etcdmemberagent.support.EventLog;
import io.etcdmemberagent.tls.ClusterCa;
import io.etcdmemberagent.tls.ClusterCa.IssuedPem;
import io.etcdmemberagent.tls.ClusterCa.Usage;
import io.etcdmemberagent.tls.TlsFileException;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The cluster's TLS when the chart generates it: the CA lives in a Secret that the first member to
 * find none creates (create-only, so racing members all end up with the one that won, and no render
 * of the chart ever makes a CA); every Pod start issues this member's certificates from it into a
 * directory only the Pod sees, and keeps the applications' client certificate Secret current.
 */
public final class GeneratedTls {

  /** How long the CA this creates is valid. */
  static final Duration CA_VALIDITY = Duration.ofDays(3650);

  /** Raised when the CA cannot be read, created or used; join waits and tries again. */
  public static final class NotReady extends Exception {
    private static final long serialVersionUID = 1L;

    NotReady(String message) {
      super(message);
    }
  }

  private final GeneratedTlsSettings settings;
  private final ClientJavaSecretApi secrets;
  private final Map<String, String> labels;

  public GeneratedTls(
      GeneratedTlsSettings settings, ClientJavaSecretApi secrets, Map<String, String> labels) {
    this.settings = settings;
    this.secrets = secrets;
    this.labels = Map.copyOf(labels);
  }

  /** The client certificate files join itself uses to reach etcd, once {@link #issue} ran. */
  public static Path clientDir(GeneratedTlsSettings settings) {
    return settings.dir().resolve("client");
  }

  /**
   * Reads (or creates) the CA, writes {@code peer/}, {@code server/}, {@code client/} and {@code
   * peer-public/} for this member, and renews the applications' Secret when due.
   */
  public void issue(String memberName, List<String> peerUrls, List<String> clientUrls)
      throws NotReady, IOException {
    ClusterCa ca = clusterCa();
    Duration validity = settings.validity();
    List<String> peerHosts = hosts(peerUrls);
    Set<String> serverSet = new LinkedHashSet<>(hosts(clientUrls));
    serverSet.addAll(settings.serverNames());
    serverSet.add("localhost");
    serverSet.add("127.0.0.1");
    List<String> serverHosts = List.copyOf(serverSet);
    List<String> peerNames = names(peerHosts);
    List<String> serverNames = names(serverHosts);
    String trust = ca.trustBundlePem();
    IssuedPem peer = ca.issue(Usage.PEER, memberName, peerNames, addresses(peerHosts), validity);
    IssuedPem server =
        ca.issue(Usage.SERVER, memberName, serverNames, addresses(serverHosts), validity);
    IssuedPem client = ca.issue(Usage.CLIENT, "etcd-member-agent", List.of(), List.of(), validity);
    write("peer", peer, trust);
    write("server", server, trust);
    write("client", client, trust);
    writeFile(settings.dir().resolve("peer-public"), "tls.crt", peer.certPem());
    writeFile(settings.dir().resolve("peer-public"), "ca.crt", trust);
    EventLog.info(
        "tls-issued",
        "caSecret",
        settings.caSecret(),
        "peerNames",
        String.join(",", peerNames),
        "serverNames",
        String.join(",", serverNames),
        "validFor",
        validity.toDays() + "d");
    if (settings.clientSecret().isPresent()) {
      keepClientSecret(ca, settings.clientSecret().get());
    }
  }

  private ClusterCa clusterCa() throws NotReady {
    String name = settings.caSecret();
    try {
      Optional<SecretData> found = secrets.read(name);
      if (found.isEmpty()) {
        ClusterCa created = ClusterCa.create(name, CA_VALIDITY);
        boolean won =
            secrets.create(
                name, Map.of("ca.crt", created.signerPem(), "ca.key", created.keyPem()), labels);
        if (won) {
          EventLog.info("tls-ca-created", "secret", name);
          return created;
        }
        // another member created it first: use theirs, never ours
        found = secrets.read(name);
        if (found.isEmpty()) {
          throw new NotReady("Secret " + name + " was created by another member, then is gone");
        }
      }
      Map<String, String> data = found.get().data();
      String bundle = data.get("ca.crt");
      String key = data.get("ca.key");
      if (bundle == null || key == null) {
        throw new NotReady("Secret " + name + " lacks ca.crt or ca.key");
      }
      return ClusterCa.parse(bundle, key, "Secret " + name);
    } catch (SecretCallException e) {
      throw new NotReady(e.getMessage());
    } catch (TlsFileException e) {
      throw new NotReady(e.getMessage());
    }
  }

  private void keepClientSecret(ClusterCa ca, String name) throws NotReady {
    try {
      Optional<SecretData> found = secrets.read(name);
      Optional<String> current = found.map(s -> s.data().get("tls.crt"));
      Optional<String> trusted = found.map(s -> s.data().get("ca.crt"));
      String why = renewalReason(ca, current, trusted);
      if (why == null) {
        return;
      }
      IssuedPem issued =
          ca.issue(Usage.CLIENT, "etcd-client", List.of(), List.of(), settings.validity());
      Map<String, String> data =
          Map.of(
              "tls.crt",
              issued.certPem(),
              "tls.key",
              issued.keyPem(),
              "ca.crt",
              ca.trustBundlePem());
      boolean done =
          found.isEmpty()
              ? secrets.create(name, data, labels)
              : secrets.replace(name, data, labels, found.get().resourceVersion());
      // false: another member wrote it at the same moment, which is as good
      EventLog.info("tls-client-secret", "secret", name, "reason", why, "written", done);
    } catch (SecretCallException e) {
      throw new NotReady(e.getMessage());
    }
  }

  /**
   * Why the applications' certificate must be (re)issued, or null when it is current. A changed
   * trust bundle counts: during a CA rotation applications must trust the new CA (from this
   * Secret's ca.crt) before any member serves a certificate it signed.
   */
  static String renewalReason(ClusterCa ca, Optional<String> certPem, Optional<String> caPem) {
    if (certPem.isEmpty()) {
      return "missing";
    }
    if (!ca.signed(certPem.get())) {
      return "not signed by the current CA";
    }
    if (!caPem.map(ca.trustBundlePem()::equals).orElse(false)) {
      return "the trusted CAs changed";
    }
    try {
      return CertificateRenewal.due(
              ClusterCa.notBefore(certPem.get()), ClusterCa.notAfter(certPem.get()), Instant.now())
          ? "two thirds of its validity passed"
          : null;
    } catch (TlsFileException e) {
      return "unreadable";
    }
  }

  private void write(String sub, IssuedPem pair, String trust) throws IOException {
    Path dir = settings.dir().resolve(sub);
    writeFile(dir, "tls.key", pair.keyPem());
    writeFile(dir, "tls.crt", pair.certPem());
    writeFile(dir, "ca.crt", trust);
  }

  /** Owner-only files, each replaced whole (a reader never sees half of one). */
  private static void writeFile(Path dir, String name, String text) throws IOException {
    Files.createDirectories(dir);
    Path tmp = dir.resolve("." + name + ".tmp");
    Files.writeString(tmp, text);
    try {
      Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
    } catch (UnsupportedOperationException notPosix) {
      // best effort: the directory is the Pod's own
    }
    Files.move(
        tmp,
        dir.resolve(name),
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  /** An IP literal goes into a certificate as an IP address, anything else as a DNS name. */
  static boolean ipLiteral(String host) {
    return host.matches("[0-9.]+") || host.contains(":");
  }

  private static List<String> names(List<String> hosts) {
    return hosts.stream().filter(h -> !ipLiteral(h)).toList();
  }

  private static List<String> addresses(List<String> hosts) {
    return hosts.stream().filter(GeneratedTls::ipLiteral).toList();
  }

  private static List<String> hosts(List<String> urls) {
    List<String> hosts = new ArrayList<>();
    for (String u : urls) {
      String host = URI.create(u).getHost();
      if (host != null && host.startsWith("[")) {
        host = host.substring(1, host.length() - 1);
      }
      if (host != null && !hosts.contains(host)) {
        hosts.add(host);
      }
    }
    return hosts;
  }
}
