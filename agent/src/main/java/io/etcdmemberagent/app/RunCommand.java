package io.etcdmemberagent.app;

import io.etcdmemberagent.config.GoDuration;
import io.etcdmemberagent.config.PromotionSettings;
import io.etcdmemberagent.config.RunConfig;
import io.etcdmemberagent.core.LearnerWatch;
import io.etcdmemberagent.core.MemberEvaluator;
import io.etcdmemberagent.core.PromotionPolicy;
import io.etcdmemberagent.core.PromotionTracker;
import io.etcdmemberagent.core.ReadinessPolicy;
import io.etcdmemberagent.etcd.ClientTls;
import io.etcdmemberagent.etcd.GrpcEtcdGateway;
import io.etcdmemberagent.http.HttpServer;
import io.etcdmemberagent.http.MetricsSource;
import io.etcdmemberagent.metrics.MicrometerMetrics;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;

/** The {@code run} subcommand: wires the adapters around the core and runs until SIGTERM. */
public final class RunCommand {

  /** Start-up failed in a way the configuration explains (exit status 2). */
  public static final class StartupException extends Exception {
    public StartupException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final RunConfig config;
  private final Clock clock = Clock.systemUTC();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private GrpcEtcdGateway etcd;
  private MicrometerMetrics metrics;
  private PollLoop loop;
  private AgentState state;
  private HttpServer http;

  public RunCommand(RunConfig config) {
    this.config = config;
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
    stopped.await();
  }

  private void stopAsync(String signal) {
    EventLog.info("signal", "name", "SIG" + signal);
    Thread stopper = new Thread(this::stop, "shutdown");
    stopper.start();
  }

  void start() throws StartupException {
    etcd =
        new GrpcEtcdGateway(
            new ClientTls(config.tls().caCert(), config.tls().cert(), config.tls().key()),
            config.etcdTimeout());
    metrics = new MicrometerMetrics();
    MembershipReader membership =
        new MembershipReader(
            etcd,
            config.etcdEndpoint().toString(),
            config.clusterEndpoints().stream().map(URI::toString).toList());
    SnapshotCollector collector =
        new SnapshotCollector(
            etcd, membership, clock, config.etcdEndpoint().toString(), config.peerUrls());
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
            new MemberEvaluator(new ReadinessPolicy(config.maxLagEntries())),
            new LearnerWatch(p.stallTimeout()),
            new PromotionTracker(policy, () -> ThreadLocalRandom.current().nextDouble()),
            new Promoter(etcd, membership, clock),
            metrics,
            new TransitionLog(),
            clock,
            new PollLoop.Intervals(config.pollInterval(), p.learnerPollInterval()));
    state = new AgentState(loop, clock, maxVerdictAge(), statusExtras());
    try {
      http = HttpServer.start(config.httpHost(), config.httpPort(), state, metricsSource());
    } catch (RuntimeException e) {
      closeQuietly();
      throw new StartupException(
          "cannot serve HTTP on --http-host "
              + config.httpHost()
              + " --http-port "
              + config.httpPort()
              + ": "
              + rootMessage(e),
          e);
    }
    loop.start();
    EventLog.info(
        "started",
        "etcdEndpoint",
        config.etcdEndpoint(),
        "httpPort",
        http.port(),
        "pollInterval",
        GoDuration.format(config.pollInterval()),
        "etcdTimeout",
        GoDuration.format(config.etcdTimeout()),
        "maxLagEntries",
        config.maxLagEntries(),
        "kube",
        "off");
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
    agent.put("kube", "off");
    return Map.of("agent", agent);
  }

  private MetricsSource metricsSource() {
    return new MetricsSource() {
      @Override
      public String contentType(String accept) {
        return metrics.contentType(accept);
      }

      @Override
      public String scrape(String accept) {
        return metrics.scrape(accept);
      }
    };
  }

  int httpPort() {
    return http.port();
  }

  /** Readiness turns false first, then the loop, HTTP and etcd channels close. */
  synchronized void stop() {
    if (stopped.getCount() == 0) {
      return;
    }
    EventLog.info("stopping");
    if (state != null) {
      state.beginShutdown();
    }
    closeQuietly();
    EventLog.info("stopped");
    stopped.countDown();
  }

  private void closeQuietly() {
    for (AutoCloseable c : new AutoCloseable[] {loop, http, etcd, metrics}) {
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
