package io.etcdmemberagent.bench;

import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * /readyz and /metrics under 1000 requests a second from a second process ({@link LoadGen}), and
 * whether that load slows the poll loop (mean poll duration from the agent's own histogram, idle
 * versus under load).
 */
final class LatencyBench {

  private final Settings settings;
  private final Path workDir;

  LatencyBench(Settings settings, Path workDir) {
    this.settings = settings;
    this.workDir = workDir;
  }

  void run(Report report) throws Exception {
    String endpoint = "http://127.0.0.1:" + FreePorts.next();
    Process etcd =
        SingleEtcd.start(
            EtcdBinaries.primary(),
            "lat",
            workDir.resolve("lat.etcd"),
            endpoint,
            workDir.resolve("lat-etcd.log"));
    try {
      report.section(
          "HTTP under load",
          "1000 requests/s for "
              + settings.loadSeconds().toSeconds()
              + " s from a second JVM process (fixed rate, latency from each request's intended"
              + " start; one warm-up run first, not counted), the agent with the image's JVM and"
              + " flags polling at 1s; \"before\" is the agent built before this round when"
              + " `BEFORE_JAR` is given. Mean poll duration from the agent's own histogram over an"
              + " idle window and over the load.");
      if (!FootprintBench.beforeJar().equals(AgentProcess.jar())) {
        measure(report, endpoint, "before", FootprintBench.beforeJar(), List.of("/metrics"));
      }
      measure(report, endpoint, "now", AgentProcess.jar(), List.of("/readyz", "/metrics"));
    } finally {
      Processes.kill(etcd);
    }
  }

  private void measure(Report report, String endpoint, String variant, Path jar, List<String> paths)
      throws Exception {
    int port = FreePorts.next();
    List<String> jvm = new ArrayList<>(List.of(FootprintBench.imageJava(), "-XX:MaxRAM=256m"));
    jvm.addAll(FootprintBench.TUNED);
    try (AgentProcess agent =
        AgentProcess.startJar(
            jvm,
            jar,
            port,
            Map.of(),
            "run",
            "--etcd-endpoint=" + endpoint,
            "--http-host=127.0.0.1",
            "--http-port=" + port,
            "--kube=off")) {
      DetectionBench.millisUntil(
          System.nanoTime(), () -> Http.statusOrMinusOne(port, "/readyz") == 200);
      for (String path : paths) {
        load("http://127.0.0.1:" + port + path); // warm-up: the JIT compiles the request path
        List<Double> p50 = new ArrayList<>();
        List<Double> p99 = new ArrayList<>();
        List<Double> pollIdle = new ArrayList<>();
        List<Double> pollLoaded = new ArrayList<>();
        for (int run = 0; run < settings.runs(); run++) {
          double[] before = pollSumCount(port);
          Thread.sleep(Math.min(10_000, settings.loadSeconds().toMillis())); // an idle window
          double[] idle = pollSumCount(port);
          double[] result = load("http://127.0.0.1:" + port + path);
          double[] after = pollSumCount(port);
          p50.add(result[0]);
          p99.add(result[1]);
          pollIdle.add(meanMillis(before, idle));
          pollLoaded.add(meanMillis(idle, after));
        }
        report.row(path + " p50 at 1000 req/s", variant, Stats.of(p50).format("ms"), "");
        report.row(path + " p99 at 1000 req/s", variant, Stats.of(p99).format("ms"), "≤ 5 ms");
        report.row(
            "mean poll duration, idle → under " + path + " load",
            variant,
            Stats.of(pollIdle).format("ms") + " → " + Stats.of(pollLoaded).format("ms"),
            "no effect");
      }
    }
  }

  private double[] load(String url) throws Exception {
    return load(url, settings.loadSeconds());
  }

  /** {@link LoadGen} at 1000 req/s for {@code length}: p50 and p99 in ms. */
  static double[] load(String url, java.time.Duration length) throws Exception {
    return load(url, length, null);
  }

  /**
   * {@link LoadGen} at 1000 req/s for {@code length}, with {@code bearerToken} when not null: p50
   * and p99 in ms. More than 1% of answers that are not 200 (refused, failed) is an error, not a
   * figure.
   */
  static double[] load(String url, java.time.Duration length, String bearerToken) throws Exception {
    ProcessBuilder builder =
        new ProcessBuilder(
                javaBin(),
                "-cp",
                System.getProperty("java.class.path"),
                LoadGen.class.getName(),
                url,
                "1000",
                Long.toString(length.toSeconds()))
            .redirectErrorStream(true);
    if (bearerToken != null) {
      builder.environment().put("LOADGEN_BEARER_TOKEN", bearerToken);
    }
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes()).trim();
    p.waitFor(length.toSeconds() + 60, TimeUnit.SECONDS);
    String last = out.substring(out.lastIndexOf('\n') + 1);
    String[] f = last.split(" ");
    long sent = Long.parseLong(f[3]);
    long errors = Long.parseLong(f[4]);
    if (errors * 100 > sent) {
      throw new IllegalStateException(
          url + ": " + errors + " of " + sent + " requests failed or were not answered 200");
    }
    return new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1])};
  }

  static double[] pollSumCount(int port) {
    double sum = 0;
    double count = 0;
    for (String line : Http.get(port, "/metrics").body().split("\n")) {
      if (line.startsWith("etcd_member_agent_poll_duration_seconds_sum")) {
        sum = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      } else if (line.startsWith("etcd_member_agent_poll_duration_seconds_count")) {
        count = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return new double[] {sum, count};
  }

  private static double meanMillis(double[] from, double[] to) {
    double n = to[1] - from[1];
    return n <= 0 ? Double.NaN : (to[0] - from[0]) / n * 1000;
  }

  static String javaBin() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
