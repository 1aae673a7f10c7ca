package io.etcdmemberagent.config;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The immutable configuration of the {@code run} subcommand. */
public record RunConfig(
    URI etcdEndpoint,
    List<URI> clusterEndpoints,
    List<String> peerUrls,
    String httpHost,
    int httpPort,
    ServingSettings serving,
    Duration pollInterval,
    Duration etcdTimeout,
    long maxLagEntries,
    PromotionSettings promotion,
    DiskSettings disk,
    KubeSettings kube,
    TlsFiles tls,
    EtcdCredentials credentials,
    PeerTlsSettings peerTls,
    ScaleDownSettings scaleDown,
    boolean noSpaceFailsReadiness,
    int readySuccessThreshold,
    Duration exitAfter,
    LogConfig log) {

  public static final List<Flag> FLAGS =
      Flag.withShared(
          Flag.concat(
              List.of(
                  new Flag(
                      "etcd-endpoint",
                      "http://127.0.0.1:2379",
                      "client URL of the local etcd member"),
                  new Flag(
                      "cluster-endpoints",
                      "",
                      "comma list of client URLs of voters or the client Service, for member list and"
                          + " leader calls (default: the voters' client URLs from the member list; a"
                          + " learner needs it until it has seen one)"),
                  new Flag(
                      "peer-urls",
                      "",
                      "comma list of this member's advertised peer URLs: identifies a learner in the"
                          + " member list before it has started"),
                  new Flag("http-host", "0.0.0.0", "address the HTTP server binds"),
                  new Flag(
                      "http-port",
                      "9379",
                      "port of /readyz, /livez, /status, /metrics (0: any free)")),
              ServingSettings.FLAGS,
              List.of(
                  new Flag("poll-interval", "1s", "time between polls of etcd"),
                  new Flag("etcd-timeout", "2s", "deadline of every etcd call"),
                  new Flag(
                      "max-lag-entries", "5000", "in-sync when leader raftIndex - applied <= this"),
                  new Flag(
                      "ready-success-threshold",
                      "1",
                      "healthy polls in a row before /readyz is 200 again after a failed one (failing is"
                          + " immediate)"),
                  new Flag(
                      "promote",
                      "true",
                      "promote this learner when our rule holds (false: observe only)"),
                  new Flag(
                      "promote-stable-polls",
                      "2",
                      "consecutive polls the whole rule must hold (lag within --max-lag-entries) before promoting"),
                  new Flag(
                      "learner-poll-interval",
                      "200ms",
                      "time between polls while this member is a learner"),
                  new Flag(
                      "promote-backoff",
                      "500ms",
                      "first wait after etcd refuses a promote; doubles, with jitter"),
                  new Flag("promote-max-backoff", "10s", "longest wait between promote attempts"),
                  new Flag(
                      "stall-timeout",
                      "5m",
                      "report a learner stalled after this long without progress"),
                  new Flag(
                      "data-dir", "", "etcd's data dir: enables the disk check (disk-healthy)"),
                  new Flag(
                      "disk-free-critical", "5%", "the disk check fails below this free space"),
                  new Flag(
                      "disk-free-warning", "15%", "below this free space is reported, not failed"),
                  new Flag(
                      "fsync-probe-interval",
                      "30s",
                      "how often to time a 4 KiB write+fsync next to the data dir"),
                  new Flag(
                      "fsync-critical", "500ms", "the disk check fails when write+fsync is slower"),
                  new Flag(
                      "quota-backend-bytes",
                      "2147483648",
                      "the member's --quota-backend-bytes (etcd default 2 GiB)"),
                  new Flag(
                      "quota-critical",
                      "95%",
                      "the disk check fails when the backend reaches this share of the quota"),
                  new Flag(
                      "disk-gates-readiness",
                      "true",
                      "a failing disk check makes the member not ready"),
                  new Flag(
                      "inodes-free-critical",
                      "5%",
                      "the disk check fails below this share of free inodes"),
                  new Flag(
                      "inodes-free-warning",
                      "10%",
                      "below this share of free inodes is reported, not failed"),
                  new Flag(
                      "nospace-fails-readiness",
                      "false",
                      "a NOSPACE alarm makes the member not ready (reads still work; CORRUPT always does)"),
                  new Flag(
                      "peer-cert",
                      "",
                      "PEM peer certificate of this member, judged when its peer port cannot be dialled"),
                  new Flag(
                      "peer-cacert",
                      "",
                      "PEM CA bundle the peer certificates must chain to (peer-tls check)"),
                  new Flag(
                      "cert-expiry-warning",
                      "720h",
                      "the peer-tls check fails when a peer certificate ends within this time"),
                  new Flag(
                      "peer-tls-check-interval",
                      "1m",
                      "how often to inspect this member's peer certificate (and at once when its peer URLs change)"),
                  new Flag(
                      "peer-tls-gates-readiness",
                      "false",
                      "a failing peer-tls check makes the member not ready"),
                  new Flag(
                      "peer-tls-required",
                      "true",
                      "false: plain-http peer URLs are a choice, and the peer-tls check passes"),
                  new Flag(
                      "tls-reload-interval",
                      "10s",
                      "how often to re-read --cacert/--cert/--key and use changed files without a restart")),
              KubeSettings.SHARED_FLAGS,
              List.of(
                  new Flag(
                      "resync-interval",
                      "5m",
                      "re-read the Pod this often and restore our conditions if something removed them"),
                  new Flag(
                      "remove-surplus-members",
                      "false",
                      "remove this StatefulSet's surplus members (ordinal outside the StatefulSet's"
                          + " range) one at a time by the scale-down rule, holding a terminating"
                          + " member's etcd (GET /hold-etcd from its preStop) until it is settled;"
                          + " only where a removed member's volume can join again (the chart's"
                          + " cluster mode, with join), false: never"),
                  new Flag(
                      "scale-down-check-interval",
                      "30s",
                      "how often the leader's agent looks for surplus members whose Pods are gone"),
                  new Flag(
                      "scale-down-budget",
                      "45s",
                      "on SIGTERM or etcd's hold, how long a surplus member's agent keeps trying to"
                          + " remove its member while etcd is held (budget + etcd's stop + 2s within"
                          + " the Pod's terminationGracePeriodSeconds)"),
                  new Flag(
                      "down-event-after",
                      "30s",
                      "post a LocalMemberDown event when the local etcd has not answered this long"),
                  new Flag(
                      "exit-after",
                      "0s",
                      "stop on its own after this long, as on SIGTERM (0s: never); for the training run"
                          + " that makes the image's ahead-of-time cache"))));

  /** An IPv4 or IPv6 literal or a host name (what a listening address can be). */
  private static final String HOST =
      "[0-9A-Za-z]([-0-9A-Za-z.]*[0-9A-Za-z])?|\\[?[0-9A-Fa-f:.]+\\]?";

  public static RunConfig parse(List<String> args, Map<String, String> env) throws ConfigException {
    FlagValues v = FlagValues.parse(FLAGS, args, env, Subcommands.allEnvNames());
    URI etcd = v.url("etcd-endpoint");
    List<URI> cluster = v.urlList("cluster-endpoints");
    List<String> peers = v.urlList("peer-urls").stream().map(URI::toString).toList();
    TlsFiles tls = TlsFiles.parse(v);
    Duration poll = v.positiveDuration("poll-interval");
    Duration timeout = v.positiveDuration("etcd-timeout");
    PromotionSettings promotion =
        new PromotionSettings(
            v.bool("promote"),
            v.intBetween("promote-stable-polls", 1, 1000),
            v.positiveDuration("learner-poll-interval"),
            v.positiveDuration("promote-backoff"),
            v.positiveDuration("promote-max-backoff"),
            v.positiveDuration("stall-timeout"));
    if (promotion.maxBackoff().compareTo(promotion.backoff()) < 0) {
      throw new ConfigException("--promote-max-backoff must not be shorter than --promote-backoff");
    }
    return new RunConfig(
        etcd,
        cluster,
        peers,
        v.optionalMatching("http-host", HOST, "an IP address or a host name, like 0.0.0.0")
            .orElseThrow(() -> new ConfigException("--http-host is required")),
        v.port("http-port"),
        ServingSettings.parse(v),
        poll,
        timeout,
        v.longAtLeast("max-lag-entries", 0),
        promotion,
        disk(v),
        kube(v, env),
        tls,
        EtcdCredentials.parse(v),
        peerTls(v),
        new ScaleDownSettings(
            v.bool("remove-surplus-members"),
            v.positiveDuration("scale-down-check-interval"),
            v.positiveDuration("scale-down-budget")),
        v.bool("nospace-fails-readiness"),
        v.intBetween("ready-success-threshold", 1, 100),
        v.duration("exit-after"),
        logConfig(v));
  }

  private static DiskSettings disk(FlagValues v) throws ConfigException {
    notBelow(v, "disk-free-warning", "disk-free-critical");
    notBelow(v, "inodes-free-warning", "inodes-free-critical");
    return new DiskSettings(
        v.optional("data-dir").map(Path::of),
        v.percent("disk-free-critical"),
        v.percent("disk-free-warning"),
        v.percent("inodes-free-critical"),
        v.percent("inodes-free-warning"),
        v.positiveDuration("fsync-probe-interval"),
        v.positiveDuration("fsync-critical"),
        v.longAtLeast("quota-backend-bytes", 1),
        v.percent("quota-critical"),
        v.bool("disk-gates-readiness"));
  }

  /** A warning threshold of free space must not be below its critical one. */
  private static void notBelow(FlagValues v, String warning, String critical)
      throws ConfigException {
    if (v.percent(warning) < v.percent(critical)) {
      throw new ConfigException(
          "--"
              + warning
              + " ("
              + v.string(warning)
              + ") must not be below --"
              + critical
              + " ("
              + v.string(critical)
              + ")");
    }
  }

  private static PeerTlsSettings peerTls(FlagValues v) throws ConfigException {
    return new PeerTlsSettings(
        v.readableFile("peer-cert"),
        v.readableFile("peer-cacert"),
        v.positiveDuration("cert-expiry-warning"),
        v.positiveDuration("tls-reload-interval"),
        v.positiveDuration("peer-tls-check-interval"),
        v.bool("peer-tls-gates-readiness"),
        v.bool("peer-tls-required"));
  }

  private static KubeSettings kube(FlagValues v, Map<String, String> env) throws ConfigException {
    return KubeSettings.parse(
        v, env, v.positiveDuration("resync-interval"), v.positiveDuration("down-event-after"));
  }

  static LogConfig logConfig(FlagValues v) throws ConfigException {
    return new LogConfig(
        v.choice("log-format", List.of("text", "json")),
        v.choice("log-level", List.of("debug", "info", "warn", "error")));
  }
}
