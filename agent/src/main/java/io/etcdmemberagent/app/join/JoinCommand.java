package io.etcdmemberagent.app.join;

import io.etcdmemberagent.app.EtcdLogins;
import io.etcdmemberagent.app.StartupException;
import io.etcdmemberagent.app.TlsReloader;
import io.etcdmemberagent.config.GeneratedTlsSettings;
import io.etcdmemberagent.config.GoDuration;
import io.etcdmemberagent.config.JoinConfig;
import io.etcdmemberagent.config.KubeSettings;
import io.etcdmemberagent.core.AddAnswer;
import io.etcdmemberagent.core.CallFailure;
import io.etcdmemberagent.core.ChangeAnswer;
import io.etcdmemberagent.core.EtcdGateway;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.join.DataDirMember;
import io.etcdmemberagent.core.join.EtcdConfigYaml;
import io.etcdmemberagent.core.join.InitialCluster;
import io.etcdmemberagent.core.join.JoinDecider;
import io.etcdmemberagent.core.join.JoinFacts;
import io.etcdmemberagent.core.join.JoinPlan;
import io.etcdmemberagent.core.join.JoinRecord;
import io.etcdmemberagent.core.membership.ScaleTarget;
import io.etcdmemberagent.disk.WalIdentity;
import io.etcdmemberagent.etcd.ClientTls;
import io.etcdmemberagent.etcd.GrpcEtcdGateway;
import io.etcdmemberagent.kube.ClientJavaPodApi;
import io.etcdmemberagent.kube.ClientJavaSecretApi;
import io.etcdmemberagent.kube.ClientJavaStatefulSetApi;
import io.etcdmemberagent.support.EventLog;
import io.etcdmemberagent.tls.ClientTlsFiles;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The {@code join} subcommand (init container): makes this pod's member a learner of the existing
 * cluster (or recognises that it already is one, or restarts from its data), then writes the
 * environment file etcd starts from. Idempotent: run it again and it finds what it did before.
 */
public final class JoinCommand {

  /** Exit status when a person must act (lost volume) or the join timeout passed. */
  public static final int GAVE_UP = 1;

  private static final Duration FIRST_BACKOFF = Duration.ofMillis(500);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);
  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(10);

  private final JoinConfig config;
  private final EtcdGateway etcd;
  private final List<String> endpoints;
  private final Consumer<JoinRecord> recorder;
  private final Supplier<ScaleTarget> scaleTarget;

  /** What the last finished plan did, for the record: a sentence and the member's ID. */
  private String outcome = "";

  private long memberId;

  /** The data dir entry a removed member's {@code member/} directory is moved to. */
  static final String SET_ASIDE_PREFIX = "removed-member-";

  /** The ID of the removed member whose data this join moved aside. */
  private long setAsideId;

  /** The ID of this member's lost entry, once join removed it to add it again. */
  private long replacedId;

  public JoinCommand(JoinConfig config, EtcdGateway etcd) {
    this(config, etcd, record -> {});
  }

  /** {@code recorder} keeps each decision (and each new reason to wait) in the EtcdMember. */
  public JoinCommand(JoinConfig config, EtcdGateway etcd, Consumer<JoinRecord> recorder) {
    this(config, etcd, recorder, () -> new ScaleTarget.None("not read"));
  }

  /** {@code scaleTarget}: the StatefulSet's size, read when a removed member's data is found. */
  public JoinCommand(
      JoinConfig config,
      EtcdGateway etcd,
      Consumer<JoinRecord> recorder,
      Supplier<ScaleTarget> scaleTarget) {
    this.scaleTarget = memoized(scaleTarget);
    this.config = config;
    this.etcd = etcd;
    this.endpoints = config.clusterEndpoints().stream().map(URI::toString).toList();
    this.recorder = recorder;
  }

  /** The StatefulSet's size as join sees it, through the Pod's own service account. */
  static ScaleTarget scaleTarget(JoinConfig config, Map<String, String> env) {
    KubeSettings k = config.kube();
    boolean available = k.kubeconfig().isPresent() || ClientJavaPodApi.inCluster(env);
    if (k.mode().equals("off") || !available || k.podNamespace().isEmpty()) {
      return new ScaleTarget.None("not in Kubernetes (or no --pod-namespace)");
    }
    try (ClientJavaPodApi pods = connectPods(config)) {
      return new ClientJavaStatefulSetApi(pods, java.time.Clock.systemUTC()).target();
    } catch (IOException | RuntimeException e) {
      return new ScaleTarget.Unread("cannot set up the Kubernetes client: " + e);
    }
  }

  /** join's Kubernetes client, through the Pod's own service account (--pod-namespace is set). */
  private static ClientJavaPodApi connectPods(JoinConfig config) throws IOException {
    KubeSettings k = config.kube();
    return ClientJavaPodApi.connect(
        k.kubeconfig(),
        k.podNamespace().get(),
        k.podName().orElse(config.name()),
        k.conditionPrefix(),
        k.timeout());
  }

  /** Read once when needed; an unread answer (the API server failed) is asked again next time. */
  private static Supplier<ScaleTarget> memoized(Supplier<ScaleTarget> read) {
    ScaleTarget[] once = new ScaleTarget[1];
    return () -> {
      if (once[0] != null) {
        return once[0];
      }
      ScaleTarget t = read.get();
      if (!(t instanceof ScaleTarget.Unread)) {
        once[0] = t;
      }
      return t;
    };
  }

  /** Runs {@code join} with a gRPC gateway to etcd; returns the exit status. */
  public static int execute(JoinConfig config)
      throws IOException, InterruptedException, StartupException {
    ClientTlsFiles files =
        new ClientTlsFiles(config.tls().caCert(), config.tls().cert(), config.tls().key());
    if (config.generatedTls().isPresent()) {
      int status = issueGeneratedTls(config, config.generatedTls().get());
      if (status != 0) {
        return status;
      }
      files = generatedClientFiles(config, config.generatedTls().get());
    }
    ClientTls tls = TlsReloader.toGateway(TlsReloader.loadAtStart(files));
    try (GrpcEtcdGateway etcd =
            new GrpcEtcdGateway(
                tls,
                config.etcdTimeout(),
                EtcdLogins.of(config.credentials()),
                config.clusterEndpoints().stream().map(java.net.URI::toString).toList());
        JoinRecorder recorder = JoinRecorder.connect(config, System.getenv())) {
      return new JoinCommand(
              config,
              etcd,
              recorder == null ? r -> {} : recorder::record,
              () -> scaleTarget(config, System.getenv()))
          .run();
    }
  }

  /** Issues this member's certificates, waiting while the CA Secret cannot be had. */
  private static int issueGeneratedTls(JoinConfig config, GeneratedTlsSettings settings)
      throws IOException, InterruptedException, StartupException {
    long started = System.nanoTime();
    String last = "";
    while (true) {
      try (ClientJavaPodApi pods = connectPods(config)) {
        new GeneratedTls(
                settings,
                new ClientJavaSecretApi(pods),
                Map.of("app.kubernetes.io/created-by", "etcd-member-agent"))
            .issue(config.name(), config.peerUrls(), config.clientUrls());
        return 0;
      } catch (GeneratedTls.NotReady e) {
        if (!e.getMessage().equals(last)) {
          EventLog.warn("tls-waiting", "reason", e.getMessage());
          last = e.getMessage();
        }
      }
      Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
      if (!config.joinTimeout().isZero() && elapsed.compareTo(config.joinTimeout()) > 0) {
        EventLog.error(
            "join-gave-up", "after", GoDuration.format(config.joinTimeout()), "lastReason", last);
        return GAVE_UP;
      }
      Thread.sleep(2000);
    }
  }

  /** join's own client certificate when it talks https to etcd; none over plain http. */
  private static ClientTlsFiles generatedClientFiles(
      JoinConfig config, GeneratedTlsSettings settings) {
    boolean https =
        config.clusterEndpoints().stream().anyMatch(u -> "https".equals(u.getScheme()))
            || config.clientUrls().stream().anyMatch(u -> u.startsWith("https:"));
    if (!https) {
      return new ClientTlsFiles(Optional.empty(), Optional.empty(), Optional.empty());
    }
    Path dir = GeneratedTls.clientDir(settings);
    return new ClientTlsFiles(
        Optional.of(dir.resolve("ca.crt")),
        Optional.of(dir.resolve("tls.crt")),
        Optional.of(dir.resolve("tls.key")));
  }

  /** Runs until the env file is written (0) or it must give up ({@link #GAVE_UP}). */
  public int run() throws IOException, InterruptedException {
    long started = System.nanoTime();
    Long noClusterSince = null;
    long lastProgressLog = System.nanoTime();
    String lastReason = "";
    Duration backoff = FIRST_BACKOFF;
    while (true) {
      DataDirMember dataDir = WalIdentity.read(config.dataDir(), config.walDir());
      Membership membership = readMembership();
      String unconfirmed = null;
      if (JoinDecider.listOmitsDataDirMember(dataDir, membership)) {
        // a lagging member's list may miss a member the leader still has: confirm before deciding
        Membership confirmed = readLinearizable();
        if (confirmed instanceof Membership.Unknown u) {
          unconfirmed =
              "the member list omits this data dir's member, and no linearizable read confirmed"
                  + " it: "
                  + u.reason();
        } else {
          membership = confirmed;
        }
      }
      long now = System.nanoTime();
      if (membership instanceof Membership.Known) {
        noClusterSince = null;
      } else if (noClusterSince == null) {
        noClusterSince = now;
      }
      JoinFacts facts =
          new JoinFacts(
              config.name(),
              config.peerUrls(),
              dataDir,
              membership,
              config.bootstrapMember(),
              Duration.ofNanos(noClusterSince == null ? 0 : now - noClusterSince),
              config.bootstrapWait(),
              config.replaceLostMember(),
              scaleTarget.get());
      JoinPlan plan =
          unconfirmed != null ? new JoinPlan.Wait(unconfirmed) : JoinDecider.decide(facts);
      String waitReason = act(plan, membership);
      Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
      if (waitReason == null) {
        recordDecision(plan, elapsed);
        return plan instanceof JoinPlan.Fail ? GAVE_UP : 0;
      }
      recorder.accept(
          new JoinRecord(JoinRecord.waiting(waitReason), waitReason, 0, Instant.now(), elapsed));
      if (!config.joinTimeout().isZero() && elapsed.compareTo(config.joinTimeout()) > 0) {
        EventLog.error(
            "join-gave-up",
            "after",
            GoDuration.format(config.joinTimeout()),
            "lastReason",
            waitReason);
        recorder.accept(
            new JoinRecord(
                "GaveUp",
                "gave up after " + GoDuration.format(config.joinTimeout()) + ": " + waitReason,
                0,
                Instant.now(),
                elapsed));
        return GAVE_UP;
      }
      boolean due = System.nanoTime() - lastProgressLog > PROGRESS_EVERY.toNanos();
      if (!waitReason.equals(lastReason) || due) {
        EventLog.info("join-waiting", "reason", waitReason, "elapsedS", elapsed.toSeconds());
        lastProgressLog = System.nanoTime();
        lastReason = waitReason;
      }
      long half = backoff.toMillis() / 2;
      Thread.sleep(half + ThreadLocalRandom.current().nextLong(half + 1));
      backoff =
          backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0
              ? MAX_BACKOFF
              : backoff.multipliedBy(2);
    }
  }

  private void recordDecision(JoinPlan plan, Duration elapsed) {
    String decision = JoinRecord.decisionOf(plan);
    String message = outcome;
    if (setAsideId != 0 && plan instanceof JoinPlan.AddLearner) {
      decision = "RejoinedAfterRemoval";
      message =
          "set aside the data of removed member "
              + Long.toHexString(setAsideId)
              + " and "
              + outcome;
    }
    if (replacedId != 0 && plan instanceof JoinPlan.AddLearner) {
      decision = "ReplacedLostMember";
      message = "removed the lost member " + Long.toHexString(replacedId) + " and " + outcome;
    }
    recorder.accept(new JoinRecord(decision, message, memberId, Instant.now(), elapsed));
  }

  /** Carries out one plan; returns why to wait and try again, or null when done. */
  private String act(JoinPlan plan, Membership membership) throws IOException {
    if (plan instanceof JoinPlan.RestartFromData) {
      // etcd ignores the initial cluster when its data dir holds a member.
      writeEnv(InitialCluster.forSelf(config.name(), config.peerUrls()), "existing");
      outcome = "the data dir holds a member: etcd continues from it";
      EventLog.info("join-restart", "detail", outcome);
      return null;
    }
    if (plan instanceof JoinPlan.Reuse reuse) {
      writeEnv(
          InitialCluster.forJoin((Membership.Known) membership, config.name(), config.peerUrls()),
          "existing");
      memberId = reuse.self().id();
      outcome = "already in the member list (not started): not added again";
      EventLog.info(
          "join-reused",
          "memberId",
          Long.toHexString(reuse.self().id()),
          "learner",
          reuse.self().learner(),
          "detail",
          "already in the member list (not started): not added again");
      return null;
    }
    if (plan instanceof JoinPlan.Bootstrap) {
      writeEnv(InitialCluster.forSelf(config.name(), config.peerUrls()), "new");
      outcome =
          "no cluster endpoint answered for "
              + GoDuration.format(config.bootstrapWait())
              + ": this designated member started a new cluster";
      EventLog.warn(
          "join-bootstrap",
          "detail",
          "no cluster endpoint answered for "
              + GoDuration.format(config.bootstrapWait())
              + ": this designated member starts a new cluster");
      return null;
    }
    if (plan instanceof JoinPlan.AddLearner) {
      return addLearner();
    }
    if (plan instanceof JoinPlan.Replace replace) {
      return replace(replace);
    }
    if (plan instanceof JoinPlan.SetAsideRemovedData removed) {
      return setAside(removed.removedId());
    }
    if (plan instanceof JoinPlan.Fail fail) {
      outcome = fail.message();
      EventLog.error("join-failed", "detail", fail.message());
      return null;
    }
    return ((JoinPlan.Wait) plan).reason();
  }

  private String addLearner() throws IOException {
    List<String> errors = new ArrayList<>();
    for (String endpoint : endpoints) {
      AddAnswer answer = etcd.addLearner(endpoint, config.peerUrls());
      if (answer instanceof AddAnswer.Added added) {
        Optional<MemberInfo> other =
            JoinDecider.addedConcurrentlyWith(added.members(), added.member().id());
        if (other.isPresent()) {
          return takeBack(added.member(), other.get(), endpoint);
        }
        writeEnv(
            InitialCluster.forJoin(added.members(), config.name(), config.peerUrls()), "existing");
        memberId = added.member().id();
        outcome = "added as learner " + Long.toHexString(memberId) + " through " + endpoint;
        EventLog.info(
            "joined-as-learner",
            "memberId",
            Long.toHexString(added.member().id()),
            "through",
            endpoint);
        return null;
      }
      AddAnswer.Error error = (AddAnswer.Error) answer;
      String message = error.message();
      if (message.contains("Peer URLs already exists")
          || message.contains("member ID already exist")) {
        return "added by an earlier attempt (" + message + "): reading the member list again";
      }
      if (message.contains("too many learner members in cluster")) {
        return "another learner holds the cluster's learner slot (" + message + ")";
      }
      CallFailure failure = CallFailure.classify(error.code(), message);
      if (failure.denial()) {
        return "etcd refused MemberAdd through "
            + endpoint
            + " ("
            + failure.reason()
            + "; MemberAdd needs a user with the root role): "
            + message;
      }
      errors.add(endpoint + ": " + error.code() + ": " + message);
    }
    return "MemberAdd failed: " + String.join("; ", errors);
  }

  /**
   * Removes this member's own entry again, right after adding it, because another join added its
   * member just before and that member has not started: its initial cluster lacks this one.
   */
  private String takeBack(MemberInfo self, MemberInfo other, String endpoint) {
    ChangeAnswer answer = etcd.removeMember(endpoint, self.id());
    String outcome =
        answer instanceof ChangeAnswer.Accepted
            ? "took its own entry " + Long.toHexString(self.id()) + " back"
            : "could not take its own entry back ("
                + ((ChangeAnswer.Error) answer).message()
                + "); it is reused next round";
    EventLog.warn(
        "join-raced",
        "memberId",
        Long.toHexString(self.id()),
        "other",
        Long.toHexString(other.id()),
        "detail",
        outcome);
    return "added at the same time as member "
        + Long.toHexString(other.id())
        + ", which has not started: "
        + outcome
        + "; "
        + JoinDecider.WHY_ONE_PENDING;
  }

  /** Removes this member's own lost entry; the next round adds it again as a learner. */
  private String replace(JoinPlan.Replace replace) {
    long id = replace.self().id();
    for (String endpoint : endpoints) {
      ChangeAnswer answer = etcd.removeMember(endpoint, id);
      if (answer instanceof ChangeAnswer.Accepted
          || ((ChangeAnswer.Error) answer).message().contains("member not found")) {
        replacedId = id;
        EventLog.warn(
            "join-replaced-lost-member",
            "memberId",
            Long.toHexString(id),
            "detail",
            "removed this member's own entry; adding it again as a learner");
        return "removed the lost member " + Long.toHexString(id) + "; adding it again";
      }
    }
    return "could not remove the lost member " + Long.toHexString(id);
  }

  /** A linearizable member list through the cluster endpoints; Unknown when none gives one. */
  private Membership readLinearizable() {
    return readMembership(etcd::linearizableMemberList);
  }

  private Membership readMembership() {
    if (endpoints.isEmpty()) {
      return new Membership.Unknown("no --cluster-endpoints given");
    }
    return readMembership(etcd::memberList);
  }

  /** The first member list {@code read} gets through a cluster endpoint, or why none. */
  private Membership readMembership(java.util.function.Function<String, Membership> read) {
    List<String> failures = new ArrayList<>();
    for (String endpoint : endpoints) {
      Membership m = read.apply(endpoint);
      if (m instanceof Membership.Known) {
        return m;
      }
      failures.add(((Membership.Unknown) m).reason());
    }
    return new Membership.Unknown(String.join("; ", failures));
  }

  /**
   * Moves the removed member's {@code member/} directory to {@code removed-member-<id>} in the data
   * dir (a rename on the same volume). One set-aside copy is kept: an older one (the data of an
   * earlier life of this ordinal, superseded by the life just removed) is deleted once the newer
   * copy is in place, its path logged, so repeated scale cycles cannot fill the volume.
   */
  private String setAside(long removedId) throws IOException {
    Path member = config.dataDir().resolve("member");
    Path aside = config.dataDir().resolve(SET_ASIDE_PREFIX + Long.toHexString(removedId));
    if (Files.exists(aside)) {
      aside = config.dataDir().resolve(aside.getFileName() + "-" + Instant.now().getEpochSecond());
    }
    Files.move(member, aside, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    setAsideId = removedId;
    EventLog.warn(
        "join-set-aside-removed-data",
        "memberId",
        Long.toHexString(removedId),
        "path",
        aside,
        "detail",
        "this member was removed from the cluster by a scale-down; its data was moved aside, and"
            + " it joins again as a new learner");
    List<Path> older;
    try (var existing = Files.list(config.dataDir())) {
      Path kept = aside;
      older =
          existing
              .filter(p -> p.getFileName().toString().startsWith(SET_ASIDE_PREFIX))
              .filter(p -> !p.equals(kept))
              .toList();
    }
    for (Path old : older) {
      deleteTree(old);
      EventLog.warn(
          "join-set-aside-replaced",
          "path",
          old,
          "kept",
          aside,
          "detail",
          "one set-aside copy is kept: the older copy of an earlier removed life was deleted");
    }
    return "moved the removed member's data to " + aside + "; joining as a new learner";
  }

  private static void deleteTree(Path root) throws IOException {
    try (var paths = Files.walk(root)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private void writeEnv(String initialCluster, String state) throws IOException {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("ETCD_NAME", config.name());
    env.put("ETCD_DATA_DIR", config.dataDir().toString());
    env.put("ETCD_INITIAL_CLUSTER", initialCluster);
    env.put("ETCD_INITIAL_CLUSTER_STATE", state);
    env.put("ETCD_INITIAL_ADVERTISE_PEER_URLS", String.join(",", config.peerUrls()));
    if (!config.clientUrls().isEmpty()) {
      env.put("ETCD_ADVERTISE_CLIENT_URLS", String.join(",", config.clientUrls()));
    }
    config.initialClusterToken().ifPresent(t -> env.put("ETCD_INITIAL_CLUSTER_TOKEN", t));
    EnvFile.write(config.envFile(), env);
    if (config.etcdConfigFile().isPresent()) {
      Map<String, String> owned = new LinkedHashMap<>();
      env.forEach(
          (k, v) ->
              owned.put(
                  k.substring("ETCD_".length()).toLowerCase(Locale.ROOT).replace('_', '-'), v));
      String template = Files.readString(config.etcdConfigTemplate().orElseThrow());
      EnvFile.writeText(config.etcdConfigFile().get(), EtcdConfigYaml.render(template, owned));
    }
    EventLog.info(
        "env-file-written",
        "path",
        config.envFile(),
        "state",
        state,
        "initialCluster",
        initialCluster);
  }
}
