package io.etcdmemberagent.app;

import io.etcdmemberagent.app.membership.MembershipReader;
import io.etcdmemberagent.app.membership.Promoter;
import io.etcdmemberagent.app.membership.ScaleDownRound;
import io.etcdmemberagent.app.membership.SurplusRemover;
import io.etcdmemberagent.app.poll.PeerTlsMonitor;
import io.etcdmemberagent.app.poll.PollLoop;
import io.etcdmemberagent.app.poll.SnapshotCollector;
import io.etcdmemberagent.app.poll.TransitionLog;
import io.etcdmemberagent.app.publish.KubeSync;
import io.etcdmemberagent.app.publish.MemberResourceSync;
import io.etcdmemberagent.config.DiskSettings;
import io.etcdmemberagent.config.GoDuration;
import io.etcdmemberagent.config.KubeSettings;
import io.etcdmemberagent.config.PeerTlsSettings;
import io.etcdmemberagent.config.PromotionSettings;
import io.etcdmemberagent.config.RunConfig;
import io.etcdmemberagent.config.ServingSettings;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.access.AccessGate;
import io.etcdmemberagent.core.disk.DiskEvaluator;
import io.etcdmemberagent.core.disk.DiskFacts;
import io.etcdmemberagent.core.disk.DiskPolicy;
import io.etcdmemberagent.core.membership.ScaleDownRule;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.LearnerWatch;
import io.etcdmemberagent.core.promotion.PromotionPolicy;
import io.etcdmemberagent.core.promotion.PromotionTracker;
import io.etcdmemberagent.core.publish.DesiredConditions;
import io.etcdmemberagent.core.publish.EventDetector;
import io.etcdmemberagent.core.publish.MemberReporter;
import io.etcdmemberagent.core.publish.MembershipCondition;
import io.etcdmemberagent.core.publish.PodCondition;
import io.etcdmemberagent.core.readiness.MemberEvaluator;
import io.etcdmemberagent.core.readiness.ReadinessPolicy;
import io.etcdmemberagent.core.tls.PeerTlsEvaluator;
import io.etcdmemberagent.core.tls.PeerTlsPolicy;
import io.etcdmemberagent.disk.FileSystemProbe;
import io.etcdmemberagent.etcd.GrpcEtcdGateway;
import io.etcdmemberagent.http.HttpServer;
import io.etcdmemberagent.http.ServingKeys;
import io.etcdmemberagent.kube.ClientJavaAccessReviews;
import io.etcdmemberagent.kube.ClientJavaMemberResourceApi;
import io.etcdmemberagent.kube.ClientJavaPodApi;
import io.etcdmemberagent.kube.ClientJavaStatefulSetApi;
import io.etcdmemberagent.metrics.MicrometerMetrics;
import io.etcdmemberagent.support.EventLog;
import io.etcdmemberagent.support.Version;
import io.etcdmemberagent.tls.ClientTlsFiles;
import io.etcdmemberagent.tls.ClientTlsMaterial;
import io.etcdmemberagent.tls.PeerCertificateInspector;
import io.etcdmemberagent.tls.TlsFileException;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** The {@code run} subcommand: wires the adapters around the core and runs until SIGTERM. */
public final class RunCommand {

  private static final Duration SCRAPE_WAIT_WHILE_STARTING = Duration.ofSeconds(5);

  /** How long a stopping agent waits for etcd's hold to get its answer before the port closes. */
  private static final Duration HOLD_ANSWERED_WITHIN = Duration.ofSeconds(2);

  /** How long a stopping agent that removes members gives etcd's hold to arrive, when none has. */
  private static final Duration HOLD_ARRIVES_WITHIN = Duration.ofSeconds(1);

  /**
   * The same once this agent removed its own member: its Pod is being deleted, so the hold comes,
   * but the kubelet may send it more than a second after it signals the agent (seen on the node
   * while other Pods stopped); a port closed before it arrives fails etcd's hook.
   */
  private static final Duration HOLD_ARRIVES_AFTER_REMOVAL = Duration.ofSeconds(5);

  private final RunConfig config;
  private final Clock clock = Clock.systemUTC();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private GrpcEtcdGateway etcd;
  private MicrometerMetrics metrics;
  private PollLoop loop;
  private AgentState state;
  private HttpServer http;
  private KubeSync kube;
  private final Object conditionsLock = new Object();
  private List<PodCondition> lastPollConditions; // guarded by conditionsLock
  private MemberResourceSync memberResource;
  private TlsReloader tlsReloader;
  private volatile TlsReloader servingReloader;
  private ServingAccess access;
  private SurplusRemover remover;
  private final MembershipHold hold;
  private final Map<String, String> env;

  /** {@code env}: the process environment, for in-cluster detection. */
  public RunCommand(RunConfig config, Map<String, String> env) {
    this.config = config;
    this.env = Map.copyOf(env);
    this.hold = new MembershipHold(config.scaleDown().budget());
  }

  /**
   * Starts everything and blocks until SIGTERM or SIGINT has stopped it: readiness turns false
   * first, then everything closes and this returns, so the process exits with status 0.
   */
  public void runUntilStopped() throws StartupException, InterruptedException {
    start();
    for (String name : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> stopAsync(signal.getName()));
    }
    if (!config.exitAfter().isZero()
        && !stopped.await(config.exitAfter().toMillis(), TimeUnit.MILLISECONDS)) {
      EventLog.info("exit-after", "after", GoDuration.format(config.exitAfter()));
      stop();
    }
    stopped.await();
  }

  private void stopAsync(String signal) {
    EventLog.info("signal", "name", "SIG" + signal);
    Thread stopper = new Thread(this::stop, "shutdown");
    stopper.start();
  }

  void start() throws StartupException {
    WiringView view = new WiringView();
    WiringMetrics scrapes = new WiringMetrics(SCRAPE_WAIT_WHILE_STARTING);
    ServingSettings serving = config.serving();
    Optional<ClientTlsFiles> servingFiles = servingFiles(serving);
    Optional<ClientTlsMaterial> servingMaterial = Optional.empty();
    if (servingFiles.isPresent()) {
      servingMaterial = Optional.of(TlsReloader.loadAtStart(servingFiles.get()));
    }
    access = new ServingAccess(serving.clientCaFile().isPresent(), serving.kubeAuthz(), clock);
    Optional<ServingKeys> keys = servingMaterial.map(RunCommand::servingKeys);
    HttpStart httpStart =
        HttpStart.begin(
            () ->
                HttpServer.start(
                    config.httpHost(), config.httpPort(), keys, access, view, scrapes, hold));
    try {
      metrics = new MicrometerMetrics();
      scrapes.wired(metrics);
      wire();
    } catch (StartupException | RuntimeException e) {
      httpStart.abandon();
      throw e;
    }
    view.wired(state);
    hold.wired(remover);
    try {
      http = httpStart.await();
    } catch (RuntimeException e) {
      closeQuietly();
      throw new StartupException(
          "cannot serve "
              + (serving.https() ? "HTTPS" : "HTTP")
              + " on --http-host "
              + config.httpHost()
              + " --http-port "
              + config.httpPort()
              + ": "
              + rootMessage(e),
          e);
    }
    if (servingMaterial.isPresent()) {
      HttpServer server = http;
      servingReloader =
          new TlsReloader(
              TlsReloader.SERVING,
              servingFiles.get(),
              servingMaterial.get(),
              m -> server.reloadKeys(servingKeys(m)),
              metrics,
              clock,
              config.peerTls().tlsReloadInterval());
    }
    if (kube != null) {
      kube.start(withMembership(DesiredConditions.starting()));
      kube.awaitFirstAttempt(config.kube().timeout().multipliedBy(2));
    }
    if (memberResource != null) {
      memberResource.start();
    }
    loop.start();
    if (remover != null) {
      remover.start(config.scaleDown().checkInterval());
    }
    EventLog.info(
        "started",
        "etcdEndpoint",
        config.etcdEndpoint(),
        "httpPort",
        http.port(),
        "scheme",
        serving.https() ? "https" : "http",
        "access",
        access.mode(),
        "pollInterval",
        GoDuration.format(config.pollInterval()),
        "etcdTimeout",
        GoDuration.format(config.etcdTimeout()),
        "maxLagEntries",
        config.maxLagEntries(),
        "kube",
        kubeDescription());
  }

  /** Everything but HTTP: the Kubernetes client, the etcd channels, the checks and the loop. */
  private void wire() throws StartupException {
    Optional<ClientJavaPodApi> podApi = connectKube();
    kube =
        podApi
            .map(api -> new KubeSync(api, clock, config.kube().resyncInterval(), metrics))
            .orElse(null);
    memberResource = podApi.map(this::memberResource).orElse(null);
    // one reader of the StatefulSet (it keeps the owner it found) for promotion and scale-down
    Optional<ClientJavaStatefulSetApi> statefulSet =
        podApi.map(api -> new ClientJavaStatefulSetApi(api, clock));
    ClientTlsFiles tlsFiles =
        new ClientTlsFiles(config.tls().caCert(), config.tls().cert(), config.tls().key());
    ClientTlsMaterial tlsMaterial = TlsReloader.loadAtStart(tlsFiles);
    PeerTlsSettings peer = config.peerTls();
    PeerCertificateInspector inspector =
        new PeerCertificateInspector(
            peer.peerCert(), peer.peerCaCert(), config.etcdTimeout(), clock);
    try {
      inspector.validateFiles();
    } catch (TlsFileException e) {
      throw new StartupException(e.getMessage(), e);
    }
    etcd =
        new GrpcEtcdGateway(
            TlsReloader.toGateway(tlsMaterial),
            config.etcdTimeout(),
            EtcdLogins.of(config.credentials()),
            config.clusterEndpoints().stream().map(URI::toString).toList());
    tlsReloader =
        new TlsReloader(
            TlsReloader.CLIENT,
            tlsFiles,
            tlsMaterial,
            m -> etcd.useTls(TlsReloader.toGateway(m)),
            metrics,
            clock,
            peer.tlsReloadInterval());
    MembershipReader membership =
        new MembershipReader(
            etcd,
            config.etcdEndpoint().toString(),
            config.clusterEndpoints().stream().map(URI::toString).toList());
    DiskSettings d = config.disk();
    Optional<FileSystemProbe> probe =
        d.dataDir().map(dir -> new FileSystemProbe(dir, d.fsyncProbeInterval()));
    SnapshotCollector collector =
        new SnapshotCollector(
            etcd,
            membership,
            clock,
            config.etcdEndpoint().toString(),
            config.peerUrls(),
            probe.map(pr -> (Supplier<DiskFacts>) pr::probe),
            new PeerTlsMonitor(inspector::inspect, peer.peerCheckInterval()));
    Optional<DiskEvaluator> diskEvaluator =
        probe.map(
            pr ->
                new DiskEvaluator(
                    new DiskPolicy(
                        d.freeCritical(),
                        d.freeWarning(),
                        d.inodesCritical(),
                        d.inodesWarning(),
                        d.fsyncCritical(),
                        d.quotaBytes(),
                        d.quotaCritical(),
                        d.gatesReadiness())));
    PromotionSettings p = config.promotion();
    PromotionPolicy policy =
        new PromotionPolicy(
            p.enabled(),
            config.maxLagEntries(),
            p.stablePolls(),
            p.backoff(),
            p.maxBackoff(),
            p.stallTimeout());
    loop =
        new PollLoop(
            collector,
            new MemberEvaluator(
                new ReadinessPolicy(
                    config.maxLagEntries(),
                    config.noSpaceFailsReadiness(),
                    config.readySuccessThreshold()),
                diskEvaluator,
                new PeerTlsEvaluator(
                    new PeerTlsPolicy(
                        peer.certExpiryWarning(), peer.gatesReadiness(), peer.required()))),
            new LearnerWatch(p.stallTimeout()),
            new PromotionTracker(policy, () -> ThreadLocalRandom.current().nextDouble()),
            new Promoter(etcd, membership, clock, leavingCheck(statefulSet)),
            metrics,
            new TransitionLog(),
            clock,
            new PollLoop.Intervals(config.pollInterval(), p.learnerPollInterval()),
            this::reloadChangedTlsFiles,
            publisher());
    state = new AgentState(loop, clock, maxVerdictAge(), this::statusExtras);
    if (podApi.isPresent() && config.scaleDown().enabled()) {
      remover = surplusRemover(statefulSet.orElseThrow());
    }
    ServingSettings serving = config.serving();
    if (serving.kubeAuthz()) {
      if (podApi.isEmpty()) {
        throw new StartupException(
            "--authz=kube checks callers with the Kubernetes API, which this agent does not use"
                + " (--kube=off, or no kubeconfig and not in a Pod): set --kube=on, or --authz=off"
                + " with --https-client-ca-file",
            null);
      }
      access.use(
          new AccessGate(
              new ClientJavaAccessReviews(
                  podApi.get(), serving.tokenAudiences(), serving.resourceAttributes()),
              ServingAccess::fingerprint,
              serving.allowTtl(),
              serving.denyTtl()));
    }
  }

  /** Before each poll: the etcd client's files, then the HTTPS server's. */
  private void reloadChangedTlsFiles() {
    tlsReloader.checkIfDue();
    TlsReloader s = servingReloader;
    if (s != null) {
      s.checkIfDue();
    }
  }

  private static Optional<ClientTlsFiles> servingFiles(ServingSettings s) {
    if (!s.https()) {
      return Optional.empty();
    }
    return Optional.of(
        new ClientTlsFiles(
            s.clientCaFile(),
            s.certFile(),
            s.keyFile(),
            "https-client-ca-file",
            "https-cert-file",
            "https-key-file"));
  }

  private static ServingKeys servingKeys(ClientTlsMaterial m) {
    return new ServingKeys(m.chain(), m.key().orElseThrow(), m.trusted());
  }

  /** Whether this member's Pod is leaving its StatefulSet: asked before a promote. */
  private static Supplier<Optional<String>> leavingCheck(
      Optional<ClientJavaStatefulSetApi> statefulSet) {
    return statefulSet
        .<Supplier<Optional<String>>>map(
            s -> () -> ScaleDownRule.promotionRefusal(s.target(), s.ownPodName()))
        .orElse(Optional::empty);
  }

  /** The scale-down rule's two paths, on this member's StatefulSet. */
  private SurplusRemover surplusRemover(ClientJavaStatefulSetApi statefulSet) {
    List<String> configured = new ArrayList<>(List.of(config.etcdEndpoint().toString()));
    config.clusterEndpoints().forEach(u -> configured.add(u.toString()));
    Supplier<List<String>> endpoints =
        () -> {
          List<String> all = new ArrayList<>(configured);
          all.addAll(knownClientUrls());
          return all;
        };
    MemberResourceSync resource = memberResource;
    return new SurplusRemover(
        new ScaleDownRound(etcd, endpoints, statefulSet, clock),
        this::ownMemberId,
        this::leading,
        statefulSet,
        metrics,
        kube::event,
        t -> {
          if (resource != null) {
            resource.transition(t);
          }
        },
        this::republishMembership,
        clock);
  }

  /**
   * Offers the poll's conditions with {@code membership-settled}. Serialised with {@link
   * #republishMembership()}, so the last offer always carries the rule's latest decision.
   */
  private void offerConditions(List<PodCondition> fromPoll, List<PodEvent> events) {
    synchronized (conditionsLock) {
      lastPollConditions = fromPoll;
      kube.offer(withMembership(fromPoll), events);
    }
  }

  /** The scale-down rule decided anew: the Pod's conditions say so without waiting for a poll. */
  private void republishMembership() {
    synchronized (conditionsLock) {
      if (kube != null && lastPollConditions != null) {
        kube.offer(withMembership(lastPollConditions), List.of());
      }
    }
  }

  /** The Pod's conditions with {@code membership-settled}, from the scale-down rule's last word. */
  private List<PodCondition> withMembership(List<PodCondition> conditions) {
    List<PodCondition> all = new ArrayList<>(conditions);
    SurplusRemover r = remover;
    all.add(
        r != null
            ? MembershipCondition.of(r.lastDecision())
            : MembershipCondition.off(
                "removing surplus members is off (--remove-surplus-members=false)"));
    return all;
  }

  /** This member's ID as the last poll knew it (0 before it ever answered). */
  private long ownMemberId() {
    return loop.latest()
        .map(
            o ->
                o.snapshot().local() instanceof LocalObservation.Answered a
                    ? a.status().memberId()
                    : o.snapshot().rememberedMemberId())
        .orElse(0L);
  }

  /** Each member's first client URL in the member list the last poll read (none if unread). */
  private List<String> knownClientUrls() {
    return loop.latest()
        .map(
            o ->
                o.snapshot().membership() instanceof Membership.Known known
                    ? known.members().stream()
                        .filter(m -> !m.clientUrls().isEmpty())
                        .map(m -> m.clientUrls().get(0))
                        .toList()
                    : List.<String>of())
        .orElse(List.of());
  }

  /** Whether the last poll found this member leading. */
  private boolean leading() {
    return loop.latest()
        .map(
            o ->
                o.snapshot().local() instanceof LocalObservation.Answered a
                    && a.status().isLeader())
        .orElse(false);
  }

  private String kubeDescription() {
    KubeSettings k = config.kube();
    return kube == null
        ? "off"
        : k.podNamespace().orElse("")
            + "/"
            + k.podName().orElse("")
            + k.kubeconfig().map(path -> " via " + path).orElse(" in-cluster");
  }

  /**
   * Connects to the API server when {@code --kube} asks for it and one is there: a kubeconfig, or
   * this process runs in a Pod with a service account.
   */
  private Optional<ClientJavaPodApi> connectKube() throws StartupException {
    KubeSettings k = config.kube();
    boolean available = k.kubeconfig().isPresent() || ClientJavaPodApi.inCluster(env);
    if (k.mode().equals("off") || (k.mode().equals("auto") && !available)) {
      return Optional.empty();
    }
    if (!available) {
      throw new StartupException(
          "--kube=on, but there is no kubeconfig (--kubeconfig, $KUBECONFIG) and this is not a"
              + " Pod with a service account",
          null);
    }
    if (k.podName().isEmpty() || k.podNamespace().isEmpty()) {
      throw new StartupException(
          "Kubernetes needs this Pod's name and namespace: set --pod-name and --pod-namespace"
              + " (or POD_NAME and POD_NAMESPACE from the downward API), or --kube=off",
          null);
    }
    try {
      return Optional.of(
          ClientJavaPodApi.connect(
              k.kubeconfig(),
              k.podNamespace().get(),
              k.podName().get(),
              k.conditionPrefix(),
              k.timeout()));
    } catch (IOException | RuntimeException e) {
      throw new StartupException("cannot set up the Kubernetes client: " + rootMessage(e), e);
    }
  }

  /**
   * The EtcdMember writer when {@code --member-resource} is not off (auto and on both start it: it
   * finds out itself whether the CRD is served, and says so).
   */
  private MemberResourceSync memberResource(ClientJavaPodApi pods) {
    KubeSettings k = config.kube();
    if (k.memberResource().equals("off")) {
      return null;
    }
    return new MemberResourceSync(
        ClientJavaMemberResourceApi.sharing(pods, k.conditionPrefix()),
        clock,
        k.resyncInterval(),
        k.memberResource().equals("on"),
        ClientJavaMemberResourceApi.PLURAL + "." + k.conditionPrefix());
  }

  /**
   * Hands each poll's desired conditions and events to the Kubernetes publisher, and its member
   * report to the EtcdMember writer, if any.
   */
  private Consumer<PollOutcome> publisher() {
    if (kube == null) {
      return outcome -> {};
    }
    EventDetector events = new EventDetector(config.kube().downEventAfter());
    MemberReporter reporter = new MemberReporter(Version.current(), config.disk().quotaBytes());
    return outcome -> {
      offerConditions(
          DesiredConditions.from(outcome.verdict(), outcome.progress()), events.observe(outcome));
      if (memberResource != null) {
        memberResource.offer(reporter.observe(outcome));
      }
    };
  }

  /**
   * A poll makes at most a local call, {@link MembershipReader#MAX_ATTEMPTS} member list calls, a
   * leader call, a promote and a second member list read, each bounded by the timeout; a verdict
   * older than the interval plus that budget (and a second of slack) means the loop is stuck.
   */
  private Duration maxVerdictAge() {
    long calls = 3 + 2L * MembershipReader.MAX_ATTEMPTS;
    return config.pollInterval().plus(config.etcdTimeout().multipliedBy(calls)).plusSeconds(1);
  }

  private Map<String, Object> statusExtras() {
    Map<String, Object> agent = new LinkedHashMap<>();
    agent.put("version", Version.current());
    agent.put("etcdEndpoint", config.etcdEndpoint().toString());
    agent.put("clusterEndpoints", config.clusterEndpoints().stream().map(URI::toString).toList());
    agent.put("pollInterval", GoDuration.format(config.pollInterval()));
    agent.put("etcdTimeout", GoDuration.format(config.etcdTimeout()));
    agent.put("maxLagEntries", config.maxLagEntries());
    agent.put("promote", config.promotion().enabled());
    agent.put("promoteStablePolls", config.promotion().stablePolls());
    agent.put("learnerPollInterval", GoDuration.format(config.promotion().learnerPollInterval()));
    agent.put("stallTimeout", GoDuration.format(config.promotion().stallTimeout()));
    agent.put("dataDir", config.disk().dataDir().map(Object::toString).orElse(null));
    agent.put("kube", kubeDescription());
    agent.put("memberResource", config.kube().memberResource());
    Map<String, Object> extras = new LinkedHashMap<>();
    extras.put("agent", agent);
    extras.put("tls", tlsReloader.status());
    Map<String, Object> serving = new LinkedHashMap<>();
    serving.put("scheme", config.serving().https() ? "https" : "http");
    serving.put("access", access.mode());
    TlsReloader s = servingReloader;
    if (s != null) {
      serving.putAll(s.status());
    }
    extras.put("serving", serving);
    if (kube != null) {
      extras.put("kube", kube.status());
    }
    if (memberResource != null) {
      extras.put("memberResource", memberResource.status());
    }
    if (remover != null) {
      extras.put("scaleDown", remover.status());
    }
    return extras;
  }

  int httpPort() {
    return http.port();
  }

  /**
   * Readiness turns false first; a surplus member is settled while etcd's preStop hold keeps etcd
   * serving (the hold is answered before the port closes); then the loop, HTTP and etcd channels
   * close.
   */
  synchronized void stop() {
    if (stopped.getCount() == 0) {
      return;
    }
    EventLog.info("stopping");
    if (state != null) {
      state.beginShutdown();
    }
    if (remover != null) {
      try {
        remover.onTermination(config.scaleDown().budget());
      } catch (RuntimeException e) {
        EventLog.warn("scale-down-fast-path-failed", "error", e.toString());
      }
    }
    if (http != null) {
      try {
        // with removal on, etcd has the hold as its preStop (the chart's): let it arrive
        http.awaitHoldsAnswered(holdArrivesWithin(), HOLD_ANSWERED_WITHIN);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    closeQuietly();
    EventLog.info("stopped");
    stopped.countDown();
  }

  private Duration holdArrivesWithin() {
    if (remover == null) {
      return Duration.ZERO;
    }
    return remover.removedItself() ? HOLD_ARRIVES_AFTER_REMOVAL : HOLD_ARRIVES_WITHIN;
  }

  private void closeQuietly() {
    for (AutoCloseable c :
        new AutoCloseable[] {remover, loop, kube, memberResource, http, etcd, metrics}) {
      if (c == null) {
        continue;
      }
      try {
        c.close();
      } catch (Exception e) {
        EventLog.warn(
            "close-failed", "component", c.getClass().getSimpleName(), "error", e.toString());
      }
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }
}
