package io.etcdmemberagent.bench;

import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.HttpsClients;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Processes;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLContext;

/**
 * The agent as users run it: the chart installed by {@code helm} on the {@link KubeNode} (real
 * kubelet, containerd, runc), the agent's own image with its JVM flags and ahead-of-time cache,
 * talking TLS to the real API server through the {@code kubernetes} Service, with the chart's
 * defaults: etcd's peer and client TLS with client certificates, the agent serving HTTPS with
 * {@code --authz=kube}. Measured from the node's host: start-up of a restarted agent container
 * (from the runtime's {@code startedAt}), detection and publication when the etcd container is
 * stopped, /readyz and /metrics under load at the Pod's address, and after a steady window the
 * memory as the kubelet counts it (working set) beside the process's RSS, and CPU.
 */
final class NodeBench {

  private static final String NS = "bench";
  private static final SSLContext ANY_SERVER = HttpsClients.anyServer();

  private final Settings settings;
  private final Path dir;
  private final KubeNode node;
  private final ChartRelease db;

  NodeBench(Settings settings, Path dir) {
    this.settings = settings;
    this.dir = dir;
    this.node = KubeNode.shared();
    this.db = ChartRelease.withChartDefaults(node, "bench-db", NS);
  }

  void run(Report report) throws Exception {
    node.kubectl("create", "namespace", NS);
    try {
      db.install();
      db.useApplicationsCertificate(dir);
      db.awaitReadyVoters(3, Duration.ofMinutes(5));
      report.section(
          "On a real node, in its container, the chart's defaults",
          "The chart as installed by `helm install` with its defaults on the single-node"
              + " Kubernetes of `test-e2e/kube-node.sh` (kubelet 1.36, containerd 2.4, runc), 3"
              + " members of etcd 3.6 with peer and client TLS and client certificates, the agent's"
              + " own image (JDK 25, the image's flags and AOT cache, the chart's 256 MiB limit)"
              + " serving HTTPS with `--authz=kube`, its TLS connection to the real API server."
              + " Measured from the node's host at the Pods' addresses, over HTTPS; /metrics with"
              + " the token of a ServiceAccount bound to the chart's metrics-reader Role. Start-up"
              + " from the runtime's `startedAt` of a container the kubelet restarted after"
              + " `crictl stop`.");
      startUp(report);
      detection(report);
      latency(report);
      steady(report);
    } finally {
      try {
        db.uninstall();
      } finally {
        db.client().close();
        node.tool("kubectl", 300, "delete", "namespace", NS, "--wait=true");
      }
    }
  }

  /** The agent container stopped with crictl; the kubelet starts a new one. */
  private void startUp(Report report) throws Exception {
    List<Double> livez = new ArrayList<>();
    List<Double> readyz = new ArrayList<>();
    for (int run = 0; run < settings.runs(); run++) {
      String pod = db.pod(run % 3);
      String ip = db.podIps().get(pod);
      String old = node.containerId(NS, pod, "agent");
      node.crictl("stop", old);
      Instant live = firstInstant(pod + " /livez 200", () -> status(ip, "/livez") == 200);
      Instant ready = firstInstant(pod + " /readyz 200", () -> status(ip, "/readyz") == 200);
      String now = node.containerId(NS, pod, "agent");
      if (now.equals(old)) {
        throw new IllegalStateException(pod + ": the agent container was not restarted");
      }
      Instant started =
          Instant.parse(node.inspect(now).getAsJsonObject("status").get("startedAt").getAsString());
      livez.add(Duration.between(started, live).toNanos() / 1e6);
      readyz.add(Duration.between(started, ready).toNanos() / 1e6);
      db.awaitReadyVoters(3, Duration.ofMinutes(2));
    }
    report.row(
        "container started → `/livez` 200", "in its container", Stats.of(livez).format("ms"), "");
    report.row(
        "container started → `/readyz` 200 (first verdict: a ready voter)",
        "in its container",
        Stats.of(readyz).format("ms"),
        "");
  }

  /**
   * The etcd process frozen (SIGSTOP from the host) until the agent's /readyz says 503, its {@code
   * ready} condition is False in the API server, and the client Service's EndpointSlice no longer
   * lists the Pod as ready; sampled together, then thawed. A frozen member stays down for as long
   * as it takes; an etcd container stopped with crictl comes back within a second or two, sooner
   * than the agent's next poll may look (the kubelet's own container state takes the Pod out then).
   */
  private void detection(Report report) {
    List<Double> readyz = new ArrayList<>();
    List<Double> condition = new ArrayList<>();
    List<Double> endpoint = new ArrayList<>();
    for (int run = 0; run < settings.runs(); run++) {
      String pod = db.pod(run % 3);
      String ip = db.podIps().get(pod);
      String pid = node.inspect(node.containerId(NS, pod, "etcd")).get("pid").getAsString();
      long t0 = System.nanoTime();
      signal("STOP", pid);
      double[] seen = {Double.NaN, Double.NaN, Double.NaN};
      try {
        long deadline = t0 + TimeUnit.SECONDS.toNanos(60);
        while ((Double.isNaN(seen[0]) || Double.isNaN(seen[1]) || Double.isNaN(seen[2]))
            && System.nanoTime() < deadline) {
          double at = (System.nanoTime() - t0) / 1e6;
          if (Double.isNaN(seen[0]) && status(ip, "/readyz") == 503) {
            seen[0] = at;
          }
          if (Double.isNaN(seen[1])
              && "False"
                  .equals(ChartRelease.condition(db.pod(pod), ChartRelease.PREFIX + "ready"))) {
            seen[1] = at;
          }
          if (Double.isNaN(seen[2]) && !db.readyEndpoints().contains(ip)) {
            seen[2] = at;
          }
        }
      } finally {
        signal("CONT", pid);
      }
      readyz.add(seen[0]);
      condition.add(seen[1]);
      endpoint.add(seen[2]);
      db.awaitReadyVoters(3, Duration.ofMinutes(2));
    }
    String variant = "etcd frozen (SIGSTOP)";
    report.row("→ `/readyz` 503", variant, Stats.of(readyz).format("ms"), "≤ 3050 ms");
    report.row(
        "→ condition `ready` False in the API server",
        variant,
        Stats.of(condition).format("ms"),
        "");
    report.row(
        "→ not a ready address in the client Service's EndpointSlice",
        variant,
        Stats.of(endpoint).format("ms"),
        "");
  }

  /** The status over HTTPS (a new connection, as the kubelet probes), or -1. */
  private static int status(String ip, String path) {
    return HttpsClients.statusOrMinusOne(ANY_SERVER, ip, ChartRelease.AGENT_PORT, path);
  }

  private static void signal(String signal, String pid) {
    Processes.Result r = Processes.run("kill", "-" + signal, pid);
    if (r.exitCode() != 0) {
      throw new IllegalStateException("kill -" + signal + " " + pid + ": " + r.output());
    }
  }

  /**
   * LoadGen from the host at the Pod's address, over HTTPS on kept connections (as a scraper keeps
   * its own): through the Pod network; /metrics with the reader's token.
   */
  private void latency(Report report) throws Exception {
    String ip = db.podIps().get(db.pod(0));
    db.awaitAgentReader(ip);
    for (String path : List.of("/readyz", "/metrics")) {
      String url = "https://" + ip + ":" + ChartRelease.AGENT_PORT + path;
      String token = path.equals("/metrics") ? db.readerToken() : null;
      LatencyBench.load(url, settings.loadSeconds(), token); // warm-up
      List<Double> p50 = new ArrayList<>();
      List<Double> p99 = new ArrayList<>();
      for (int run = 0; run < settings.runs(); run++) {
        double[] result = LatencyBench.load(url, settings.loadSeconds(), token);
        p50.add(result[0]);
        p99.add(result[1]);
      }
      String variant = "in its container, HTTPS, kept connections";
      report.row(path + " p50 at 1000 req/s", variant, Stats.of(p50).format("ms"), "");
      report.row(path + " p99 at 1000 req/s", variant, Stats.of(p99).format("ms"), "≤ 5 ms");
    }
  }

  /** After the steady window: RSS from /proc, the working set from the kubelet, CPU over it. */
  private void steady(Report report) throws Exception {
    db.awaitReadyVoters(3, Duration.ofMinutes(2));
    List<Long> pids = new ArrayList<>();
    List<Double> cpuBefore = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      long pid = node.inspect(node.containerId(NS, db.pod(i), "agent")).get("pid").getAsLong();
      pids.add(pid);
      cpuBefore.add(ProcessStats.cpuMillis(pid));
    }
    long t0 = System.nanoTime();
    Thread.sleep(settings.steadyWindow().toMillis()); // the window measured, not a wait for state
    double windowMillis = (System.nanoTime() - t0) / 1e6;
    List<Double> rss = new ArrayList<>();
    List<Double> anon = new ArrayList<>();
    List<Double> cpu = new ArrayList<>();
    List<Double> threads = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      long pid = pids.get(i);
      rss.add(ProcessStats.rssMiB(pid));
      anon.add(ProcessStats.anonymousMiB(pid));
      threads.add(ProcessStats.threads(pid));
      cpu.add((ProcessStats.cpuMillis(pid) - cpuBefore.get(i)) / windowMillis * 1000);
    }
    String variant = "in its container, 3 agents";
    String window = settings.steadyWindow().toSeconds() + " s";
    report.row(
        "memory as the kubelet counts it (working set) after " + window,
        variant,
        Stats.of(node.workingSets(NS, "agent").values().stream().map(b -> b / 1048576.0).toList())
            .format("MiB"),
        "limit 256 MiB");
    report.row("RSS after " + window, variant, Stats.of(rss).format("MiB"), "≤ 64 MiB");
    report.row("RSS, anonymous", variant, Stats.of(anon).format("MiB"), "");
    report.row("threads", variant, Stats.of(threads).format(""), "");
    report.row(
        "CPU over " + window + " (poll 1s, kubelet probes)",
        variant,
        Stats.of(cpu).format("millicores"),
        "≤ 5 millicores");
  }

  /** The wall-clock instant the condition first held, sampled every few milliseconds. */
  private static Instant firstInstant(String what, BooleanSupplier condition) {
    if (Double.isNaN(DetectionBench.millisUntil(System.nanoTime(), condition))) {
      throw new IllegalStateException("not within 60 s: " + what);
    }
    return Instant.now();
  }
}
