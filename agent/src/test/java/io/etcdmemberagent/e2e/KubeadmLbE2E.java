package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.etcd.jetcd.api.Member;
import io.etcdmemberagent.testing.AgentLog;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.HttpsClients;
import io.etcdmemberagent.testing.KubeadmStack;
import io.etcdmemberagent.testing.KubeadmStack.Node;
import io.etcdmemberagent.testing.LbLoad;
import io.etcdmemberagent.testing.NodeNetwork;
import io.etcdmemberagent.testing.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kubeadm's stacked control plane behind HAProxy while a third control-plane node joins the kubeadm
 * way (its etcd added as a learner, etcd and kube-apiserver started, a blind promote every 500 ms),
 * with clients reading and writing through the balancer: how many requests the joining node's API
 * server served while its etcd was a learner or more than {@code --max-lag-entries} behind, with
 * the balancer checking only the API server's {@code /readyz} (baseline) and also the agent's.
 * {@code test-e2e/kubeadm-lb.sh} runs the full form ({@code -Dkubeadm.mode=full}).
 */
class KubeadmLbE2E {

  /** What one form of the measurement loads and how long it watches. */
  record Mode(
      String name,
      int entries,
      int valueBytes,
      int requestsPerSecond,
      int etcdWritesPerSecond,
      String link,
      int settleS) {
    static Mode of(String name) {
      return name.equals("full")
          ? new Mode("full", 60_000, 1024, 40, 400, "16mbit", 30)
          : new Mode("short", 20_000, 512, 20, 200, "16mbit", 8);
    }
  }

  /** One run's figures. */
  record Result(
      boolean gated,
      int requests,
      int servedByJoiner,
      int servedWhileLearner,
      int servedWhileBehind,
      int errors,
      double p50Ms,
      double p99Ms,
      double promotedAfterS,
      double inBalancerAfterS,
      double caughtUpAfterS,
      long lagAtPromotion,
      long maxLagAfterPromotion,
      int apiServerRestarts) {}

  static final Mode MODE = Mode.of(System.getProperty("kubeadm.mode", "short"));

  @TempDir Path dir;

  @Test
  @Timeout(900)
  void theAgentKeepsTheBalancerAwayFromAnApiServerWhoseEtcdIsNotACaughtUpVoter() throws Exception {
    assumeTrue(NodeNetwork.available(), "needs root and iproute2 for network namespaces");
    Result baseline = run(false, dir.resolve("baseline"));
    Result gated = run(true, dir.resolve("gated"));

    String line =
        "result: agent-gated=%d baseline=%d client-errors=%d"
            .formatted(gated.servedWhileBehind(), baseline.servedWhileBehind(), gated.errors());
    String table = table(baseline, gated);
    Path out = Path.of("target", "kubeadm-lb");
    Files.createDirectories(out);
    Files.writeString(out.resolve("results-" + MODE.name() + ".md"), line + "\n\n" + table);
    System.out.println(line);
    System.out.println(table);

    assertThat(gated.servedWhileLearner())
        .as("the agent-gated balancer never sends a request to a learner's API server")
        .isZero();
    assertThat(gated.servedWhileBehind())
        .as("nor to one whose etcd is more than --max-lag-entries behind")
        .isZero();
    assertThat(gated.servedByJoiner())
        .as("the joined node serves once it has caught up")
        .isPositive();
    assertThat(baseline.servedByJoiner()).isPositive();
  }

  private Result run(boolean gated, Path runDir) throws IOException {
    Files.createDirectories(runDir);
    try (KubeadmStack stack = new KubeadmStack(runDir, 3);
        EtcdTestClient etcd = stack.etcdClient()) {
      Node n1 = stack.node(1);
      Node n2 = stack.node(2);
      Node n3 = stack.node(3);
      String two = KubeadmStack.initialCluster(List.of(n1, n2));
      stack.startEtcd(n1, two, "new");
      stack.startEtcd(n2, two, "new");
      Poll.until(
          "a leader among the first two",
          Duration.ofSeconds(60),
          () -> etcd.status(n1.etcdUrl(), 1000).getLeader() != 0);
      stack.startApiServer(n1);
      stack.startApiServer(n2);
      stack.startAgent(n1, List.of(n1, n2));
      stack.startAgent(n2, List.of(n1, n2));
      stack.awaitApiServerReady(n1, Duration.ofSeconds(120));
      stack.awaitApiServerReady(n2, Duration.ofSeconds(120));
      etcd.load(n1.etcdUrl(), "/preload/", MODE.entries(), MODE.valueBytes());

      stack.startLoadBalancer(gated);
      Poll.until(
          "the balancer: node-1 and node-2 UP, node-3 DOWN",
          Duration.ofSeconds(60),
          () ->
              stack.lbStatus(n1).equals("UP")
                  && stack.lbStatus(n2).equals("UP")
                  && stack.lbStatus(n3).startsWith("DOWN"));
      try (LbLoad load =
          new LbLoad(stack.loadBalancerPort(), stack.kubeCaCert(), KubeadmStack.TOKEN)) {
        load.prepare();
        load.start(MODE.requestsPerSecond());
        Poll.until(
            "a steady stream",
            Duration.ofSeconds(30),
            () -> load.samples().size() >= 2 * MODE.requestsPerSecond());

        EtcdWrites busy = new EtcdWrites(etcd, n1.etcdUrl(), MODE.etcdWritesPerSecond());
        stack.network().throttle(n3.name(), MODE.link());
        Instant joinStarted = Instant.now();
        long id = etcd.addMember(n1.etcdUrl(), n3.peerUrl(), true);
        stack.startEtcd(n3, KubeadmStack.initialCluster(List.of(n1, n2, n3)), "existing");
        stack.startApiServer(n3);
        AgentProcess agent3 = stack.startAgent(n3, List.of(n1, n2));
        LagSampler lags = new LagSampler(n3);
        Instant promoted = kubeadmPromote(etcd, n1, id);
        Poll.until(
            "node-3 UP in the balancer",
            Duration.ofSeconds(300),
            () -> stack.lbStatus(n3).equals("UP"));
        Instant inBalancer = Instant.now();
        Poll.until(
            "settle",
            Duration.ofSeconds(MODE.settleS() + 30L),
            () -> Instant.now().isAfter(inBalancer.plusSeconds(MODE.settleS())));
        load.close();
        lags.close();
        busy.close();

        List<Interval> behind = behind(agent3.output(), joinStarted);
        Interval learner = new Interval(joinStarted, promoted);
        List<Instant> served = served(n3);
        List<LbLoad.Sample> during =
            load.samples().stream().filter(s -> !s.at().isBefore(joinStarted)).toList();
        Instant caughtUp = behind.isEmpty() ? joinStarted : behind.get(behind.size() - 1).to();
        return new Result(
            gated,
            during.size(),
            served.size(),
            (int) served.stream().filter(learner::contains).count(),
            (int) served.stream().filter(t -> behind.stream().anyMatch(i -> i.contains(t))).count(),
            (int) during.stream().filter(LbLoad.Sample::failed).count(),
            percentile(during, 0.50),
            percentile(during, 0.99),
            seconds(joinStarted, promoted),
            seconds(joinStarted, inBalancer),
            seconds(joinStarted, caughtUp),
            lags.lagAt(promoted),
            lags.maxLagFrom(promoted),
            stack.apiServerRestarts(n3));
      }
    }
  }

  /**
   * kubeadm's MemberPromote: every 500 ms, done when the member list shows a voter, else a promote
   * whatever the last answer was.
   */
  private static Instant kubeadmPromote(EtcdTestClient etcd, Node through, long id) {
    Instant[] at = new Instant[1];
    Poll.until(
        "kubeadm's promote of the learner",
        Duration.ofMinutes(2),
        () -> {
          try {
            for (Member m : etcd.members(through.etcdUrl(), 2000)) {
              if (m.getID() == id && !m.getIsLearner()) {
                at[0] = Instant.now();
                return true;
              }
            }
            etcd.promote(through.etcdUrl(), id);
            at[0] = Instant.now();
            return true;
          } catch (RuntimeException refused) {
            // kubeadm retries whatever etcd answered
          }
          java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(500).toNanos());
          return false;
        });
    return at[0];
  }

  /** The joining node's agent's {@code /status} lag, five times a second. */
  static final class LagSampler implements AutoCloseable {
    private static final java.util.regex.Pattern LAG =
        java.util.regex.Pattern.compile("\"lag\":(\\d+)");
    private final List<Map.Entry<Instant, Long>> samples = new ArrayList<>();
    private final java.util.concurrent.ScheduledExecutorService timer =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();

    LagSampler(Node node) {
      // the manifest's HTTPS: /status answers a client certificate of the etcd CA
      javax.net.ssl.SSLContext scraper =
          HttpsClients.trusting(
              node.pki("etcd/ca.crt"),
              node.pki("etcd/healthcheck-client.crt"),
              node.pki("etcd/healthcheck-client.key"));
      timer.scheduleAtFixedRate(
          () -> {
            String body;
            try {
              body =
                  HttpsClients.get(scraper, node.ip(), KubeadmStack.AGENT_PORT, "/status", null)
                      .body();
            } catch (RuntimeException notYet) {
              return; // the agent is starting
            }
            java.util.regex.Matcher m = LAG.matcher(body);
            if (m.find()) {
              synchronized (samples) {
                samples.add(Map.entry(Instant.now(), Long.parseLong(m.group(1))));
              }
            }
          },
          0,
          200,
          java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** The lag the agent saw last before {@code t} (-1: none seen). */
    long lagAt(Instant t) {
      synchronized (samples) {
        long lag = -1;
        for (Map.Entry<Instant, Long> e : samples) {
          if (e.getKey().isAfter(t)) {
            break;
          }
          lag = e.getValue();
        }
        return lag;
      }
    }

    long maxLagFrom(Instant t) {
      synchronized (samples) {
        return samples.stream()
            .filter(e -> !e.getKey().isBefore(t))
            .mapToLong(Map.Entry::getValue)
            .max()
            .orElse(-1);
      }
    }

    @Override
    public void close() {
      timer.shutdownNow();
    }
  }

  /** The cluster's own write load during the join (what controllers and leases write). */
  static final class EtcdWrites implements AutoCloseable {
    private final java.util.concurrent.ScheduledExecutorService timer =
        java.util.concurrent.Executors.newScheduledThreadPool(4);
    private final java.util.concurrent.atomic.AtomicLong n =
        new java.util.concurrent.atomic.AtomicLong();

    EtcdWrites(EtcdTestClient etcd, String endpoint, int perSecond) {
      byte[] value = new byte[256];
      timer.scheduleAtFixedRate(
          () -> {
            try {
              etcd.put(endpoint, "/busy/" + (n.incrementAndGet() % 1000), value);
            } catch (RuntimeException e) {
              // a write refused during the membership change is the cluster's business
            }
          },
          0,
          1_000_000 / perSecond,
          java.util.concurrent.TimeUnit.MICROSECONDS);
    }

    @Override
    public void close() {
      timer.shutdownNow();
    }
  }

  record Interval(Instant from, Instant to) {
    boolean contains(Instant t) {
      return !t.isBefore(from) && t.isBefore(to);
    }
  }

  /**
   * From the joining node's agent log: while its member was not a voter or not in sync (the {@code
   * voter} and {@code in-sync} checks), from the join on.
   */
  static List<Interval> behind(String agentLog, Instant joinStarted) {
    Set<String> failing = new HashSet<>(Set.of("voter", "in-sync"));
    List<Interval> out = new ArrayList<>();
    Instant since = joinStarted;
    for (String line : AgentLog.of(agentLog).lines()) {
      boolean readiness = line.contains("\"event\":\"readiness\"");
      boolean check = line.contains("\"event\":\"check\"");
      if (!readiness && !check) {
        continue;
      }
      boolean wasBehind = !failing.isEmpty();
      if (readiness) {
        java.util.regex.Matcher m =
            java.util.regex.Pattern.compile("\"failing\":\"([^\"]*)\"").matcher(line);
        Set<String> now = new HashSet<>(List.of(m.find() ? m.group(1).split(",") : new String[0]));
        failing.clear();
        for (String c : List.of("voter", "in-sync")) {
          if (now.contains(c)) {
            failing.add(c);
          }
        }
      } else {
        String name = AgentLog.field(line, "name");
        if (name.equals("voter") || name.equals("in-sync")) {
          if (AgentLog.field(line, "passed").equals("true")) {
            failing.remove(name);
          } else {
            failing.add(name);
          }
        }
      }
      Instant t = AgentLog.ts(line);
      if (wasBehind && failing.isEmpty()) {
        out.add(new Interval(since, t));
      } else if (!wasBehind && !failing.isEmpty()) {
        since = t;
      }
    }
    if (!failing.isEmpty()) {
      out.add(new Interval(since, Instant.now()));
    }
    return out;
  }

  /** When the joining node's API server received each of the clients' requests (its audit log). */
  private static List<Instant> served(Node node) throws IOException {
    List<Instant> out = new ArrayList<>();
    if (!Files.exists(node.auditLog())) {
      return out;
    }
    for (String line : Files.readAllLines(node.auditLog())) {
      if (line.isBlank()) {
        continue;
      }
      JsonObject e = JsonParser.parseString(line).getAsJsonObject();
      String user = e.getAsJsonObject("user").get("username").getAsString();
      if (user.equals(KubeadmStack.CLIENT_USER)) {
        out.add(Instant.parse(e.get("requestReceivedTimestamp").getAsString()));
      }
    }
    return out;
  }

  private static double percentile(List<LbLoad.Sample> samples, double p) {
    if (samples.isEmpty()) {
      return 0;
    }
    long[] micros = samples.stream().mapToLong(LbLoad.Sample::micros).sorted().toArray();
    return micros[(int) Math.min(micros.length - 1, Math.floor(p * micros.length))] / 1000.0;
  }

  private static String lag(long entries) {
    return entries < 0 ? "unknown" : Long.toString(entries);
  }

  private static double seconds(Instant from, Instant to) {
    return Duration.between(from, to).toMillis() / 1000.0;
  }

  private static String table(Result baseline, Result gated) {
    StringBuilder t = new StringBuilder();
    t.append(
        "| balancer checks | requests during the join | served by the joining node | … while"
            + " a learner | … while a learner or behind | client errors | p50 ms | p99 ms |"
            + " promoted after s | lag at promotion | max lag after it | caught up after s | in"
            + " the balancer after s | its API server restarts |\n");
    t.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Result r : List.of(baseline, gated)) {
      t.append(
          "| %s | %d | %d | %d | %d | %d | %.1f | %.1f | %.1f | %s | %s | %.1f | %.1f | %d |\n"
              .formatted(
                  r.gated() ? "API server /readyz + agent /readyz" : "API server /readyz only",
                  r.requests(),
                  r.servedByJoiner(),
                  r.servedWhileLearner(),
                  r.servedWhileBehind(),
                  r.errors(),
                  r.p50Ms(),
                  r.p99Ms(),
                  r.promotedAfterS(),
                  lag(r.lagAtPromotion()),
                  lag(r.maxLagAfterPromotion()),
                  r.caughtUpAfterS(),
                  r.inBalancerAfterS(),
                  r.apiServerRestarts()));
    }
    t.append(
        ("\nmode %s: %d entries of %d B before the join; during it %d etcd writes/s and %d client"
                + " requests/s through HAProxy; the joining node's link %s; watched %d s after it"
                + " entered the balancer. Lag: the joining node's agent's (leader's raft index -"
                + " its applied index), unknown while its etcd does not serve yet.\n")
            .formatted(
                MODE.name(),
                MODE.entries(),
                MODE.valueBytes(),
                MODE.etcdWritesPerSecond(),
                MODE.requestsPerSecond(),
                MODE.link(),
                MODE.settleS()));
    return t.toString();
  }
}
