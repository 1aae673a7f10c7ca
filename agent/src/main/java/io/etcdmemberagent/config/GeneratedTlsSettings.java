package io.etcdmemberagent.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code join}'s generated TLS: the directory it writes this member's certificates into, the Secret
 * holding the cluster's CA (created by the first member that finds none), the Secret of the
 * applications' client certificate (empty: none), extra names of the client port's certificate (the
 * client Service), and how long the certificates it issues are valid.
 */
public record GeneratedTlsSettings(
    Path dir,
    String caSecret,
    Optional<String> clientSecret,
    List<String> serverNames,
    Duration validity) {

  static final List<Flag> FLAGS =
      List.of(
          new Flag(
              "generate-tls-dir",
              "",
              "issue this member's peer, server and client certificates from the cluster CA into"
                  + " this directory (peer/, server/, client/, peer-public/)"),
          new Flag(
              "tls-ca-secret",
              "",
              "with --generate-tls-dir: the Secret holding the cluster CA (ca.crt, ca.key); created"
                  + " once if missing, never changed"),
          new Flag(
              "tls-client-secret",
              "",
              "with --generate-tls-dir: a Secret kept with a client certificate for applications"),
          new Flag(
              "tls-server-names",
              "",
              "with --generate-tls-dir: comma list of extra DNS names of the client port's"
                  + " certificate (the client Service)"),
          new Flag(
              "tls-validity",
              "8760h",
              "with --generate-tls-dir: how long the issued certificates are valid"));

  private static final String NAME = "[a-z0-9]([-a-z0-9.]*[a-z0-9])?";

  /** Empty without {@code --generate-tls-dir}; otherwise every flag it needs, checked. */
  static Optional<GeneratedTlsSettings> parse(FlagValues v) throws ConfigException {
    Optional<String> dir = v.optional("generate-tls-dir");
    if (dir.isEmpty()) {
      for (String f : List.of("tls-ca-secret", "tls-client-secret", "tls-server-names")) {
        if (v.optional(f).isPresent()) {
          throw new ConfigException("--" + f + " needs --generate-tls-dir");
        }
      }
      return Optional.empty();
    }
    Path path = Path.of(dir.get());
    if (!Files.isDirectory(path) || !Files.isWritable(path)) {
      throw new ConfigException(
          "invalid value \"" + dir.get() + "\" for --generate-tls-dir: not a writable directory");
    }
    String ca =
        v.optionalMatching("tls-ca-secret", NAME, "a Secret name")
            .orElseThrow(
                () -> new ConfigException("--tls-ca-secret is required with --generate-tls-dir"));
    Optional<String> client = v.optionalMatching("tls-client-secret", NAME, "a Secret name");
    List<String> names = new ArrayList<>();
    for (String n : v.optional("tls-server-names").orElse("").split(",")) {
      if (!n.isBlank()) {
        if (!n.trim().matches(NAME)) {
          throw new ConfigException(
              "invalid value \"" + n.trim() + "\" for --tls-server-names: expected DNS names");
        }
        names.add(n.trim());
      }
    }
    Duration validity = v.positiveDuration("tls-validity");
    if (validity.compareTo(Duration.ofDays(1)) < 0) {
      throw new ConfigException(
          "invalid value \"" + GoDuration.format(validity) + "\" for --tls-validity: at least 24h");
    }
    return Optional.of(new GeneratedTlsSettings(path, ca, client, List.copyOf(names), validity));
  }
}
