package io.etcdmemberagent.config;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The immutable configuration of the {@code join} subcommand (the init container). */
public record JoinConfig(
    String name,
    List<String> peerUrls,
    List<String> clientUrls,
    List<URI> clusterEndpoints,
    Path dataDir,
    Path envFile,
    boolean bootstrapMember,
    Duration bootstrapWait,
    Duration joinTimeout,
    boolean replaceLostMember,
    Optional<String> initialClusterToken,
    Duration etcdTimeout,
    Optional<Path> etcdConfigTemplate,
    Optional<Path> etcdConfigFile,
    TlsFiles tls,
    EtcdCredentials credentials,
    LogConfig log,
    KubeSettings kube,
    Optional<GeneratedTlsSettings> generatedTls,
    Optional<Path> walDir) {

  public static final List<Flag> FLAGS =
      Flag.withShared(
          Flag.concat(
              List.of(
                  new Flag("name", null, "this member's name (default: $POD_NAME, the Pod name)"),
                  new Flag("peer-urls", null, "comma list of this member's advertised peer URLs"),
                  new Flag("client-urls", "", "comma list of this member's advertised client URLs"),
                  new Flag(
                      "cluster-endpoints",
                      "",
                      "comma list of client URLs of the cluster's voters or its client Service"),
                  new Flag(
                      "data-dir",
                      null,
                      "the etcd data dir of this member (read; a removed member's data is moved aside in it)"),
                  new Flag(
                      "wal-dir",
                      "",
                      "etcd's --wal-dir, when the WAL is not in the data dir's member/wal (read)"),
                  new Flag(
                      "env-file",
                      null,
                      "where to write the environment file the etcd container sources"),
                  new Flag(
                      "bootstrap-member",
                      "",
                      "name of the one member that may start a new cluster (e.g. etcd-0)"),
                  new Flag(
                      "bootstrap-wait",
                      "30s",
                      "the bootstrap member starts a new cluster only after no endpoint answered this long"),
                  new Flag(
                      "join-timeout", "0", "give up after this long (0: wait as long as it takes)"),
                  new Flag(
                      "replace-lost-member",
                      "false",
                      "if this member started before but its data dir is empty, remove and re-add it"),
                  new Flag(
                      "initial-cluster-token", "", "ETCD_INITIAL_CLUSTER_TOKEN for a new cluster"),
                  new Flag("etcd-timeout", "2s", "deadline of every etcd call"),
                  new Flag(
                      "etcd-config-template",
                      "",
                      "an etcd --config-file of static settings; with --etcd-config-file, join writes it"
                          + " completed with its decision (for etcd images without a shell)"),
                  new Flag(
                      "etcd-config-file",
                      "",
                      "where to write the completed etcd config file (with --etcd-config-template)")),
              GeneratedTlsSettings.FLAGS,
              KubeSettings.SHARED_FLAGS));

  /** join records its decision in the EtcdMember; these only matter to {@code run}. */
  private static final Duration RUN_ONLY = Duration.ofMinutes(5);

  public static JoinConfig parse(List<String> args, Map<String, String> env)
      throws ConfigException {
    FlagValues v = FlagValues.parse(FLAGS, args, env, Subcommands.allEnvNames());
    String name =
        v.optional("name")
            .or(() -> Optional.ofNullable(env.get("POD_NAME")).filter(n -> !n.isBlank()))
            .orElseThrow(() -> new ConfigException("--name (or POD_NAME) is required"));
    List<String> peers = v.urlList("peer-urls").stream().map(URI::toString).toList();
    if (peers.isEmpty()) {
      throw new ConfigException("--peer-urls is required");
    }
    List<URI> cluster = v.urlList("cluster-endpoints");
    boolean bootstrap = v.optional("bootstrap-member").map(name::equals).orElse(false);
    if (cluster.isEmpty() && !bootstrap) {
      throw new ConfigException(
          "--cluster-endpoints is required (only the --bootstrap-member may go without)");
    }
    TlsFiles tls = TlsFiles.parse(v);
    Optional<GeneratedTlsSettings> generated = GeneratedTlsSettings.parse(v);
    if (generated.isPresent() && (tls.caCert().isPresent() || tls.cert().isPresent())) {
      throw new ConfigException(
          "--generate-tls-dir and --cacert/--cert/--key exclude each other: join uses the client"
              + " certificate it issues");
    }
    Path envFile = Path.of(v.string("env-file"));
    Path parent = envFile.toAbsolutePath().getParent();
    if (parent == null || !java.nio.file.Files.isDirectory(parent)) {
      throw new ConfigException(
          "invalid value \"" + envFile + "\" for --env-file: its directory does not exist");
    }
    Optional<Path> template = v.readableFile("etcd-config-template");
    Optional<Path> configFile = v.optional("etcd-config-file").map(Path::of);
    if (template.isPresent() != configFile.isPresent()) {
      throw new ConfigException(
          "--etcd-config-template and --etcd-config-file must be given together");
    }
    if (configFile.isPresent()
        && !java.nio.file.Files.isDirectory(configFile.get().toAbsolutePath().getParent())) {
      throw new ConfigException(
          "invalid value \""
              + configFile.get()
              + "\" for --etcd-config-file: its directory does not exist");
    }
    KubeSettings kube = KubeSettings.parse(v, env, RUN_ONLY, RUN_ONLY);
    if (generated.isPresent() && (kube.mode().equals("off") || kube.podNamespace().isEmpty())) {
      throw new ConfigException(
          "--generate-tls-dir keeps the CA in a Secret: it needs --kube auto or on, and"
              + " --pod-namespace (or POD_NAMESPACE)");
    }
    return new JoinConfig(
        name,
        peers,
        v.urlList("client-urls").stream().map(URI::toString).toList(),
        cluster,
        Path.of(v.string("data-dir")),
        envFile,
        bootstrap,
        v.duration("bootstrap-wait"),
        v.duration("join-timeout"),
        v.bool("replace-lost-member"),
        v.optional("initial-cluster-token"),
        v.positiveDuration("etcd-timeout"),
        template,
        configFile,
        tls,
        EtcdCredentials.parse(v),
        RunConfig.logConfig(v),
        kube,
        generated,
        v.optional("wal-dir").map(Path::of));
  }
}
