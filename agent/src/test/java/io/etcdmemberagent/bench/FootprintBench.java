package io.etcdmemberagent.bench;

import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What one agent costs: start-up to the first /livez and to the first verdict, and after a steady
 * window of polling at 1s with the disk check while being scraped like a kubelet and Prometheus
 * would (/readyz every 5 s, /metrics every 15 s): resident memory, heap in use, threads and CPU.
 * JVM variants on JDK 17 and JDK 25: default flags; the flags and archive the image had before
 * tuning (a class-data-sharing archive of {@code run --help}); the image's flags and archive now (a
 * training run with {@code --exit-after}, as the Dockerfile makes it). Every variant gets {@code
 * -XX:MaxRAM=256m}, what the JVM sees under the chart's 256Mi limit. The steady windows run side by
 * side.
 */
public final class FootprintBench {

  static final List<String> TUNED_BEFORE =
      List.of(
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          "-XX:MaxRAMPercentage=60",
          "-Xss512k",
          "-XX:-UsePerfData");

  /** The Dockerfile's ENTRYPOINT flags (DockerfileTest keeps the two in step). */
  public static final List<String> TUNED =
      List.of(
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          "-XX:MaxRAMPercentage=60",
          "-XX:MinHeapFreeRatio=5",
          "-XX:MaxHeapFreeRatio=20",
          "-Xss512k",
          "-XX:-UsePerfData",
          "-Dio.netty.allocator.type=unpooled");

  record Variant(String name, List<String> jvm) {}

  private final Settings settings;
  private final Path workDir;

  FootprintBench(Settings settings, Path workDir) {
    this.settings = settings;
    this.workDir = workDir;
  }

  List<Variant> variants() throws Exception {
    List<Variant> variants = new ArrayList<>();
    for (String jdk : jdks()) {
      String java = Path.of(jdk, "bin", "java").toString();
      String label = "JDK " + majorVersion(java);
      List<String> base = List.of(java, "-XX:MaxRAM=256m");
      variants.add(new Variant(label + ", default flags", base));
      List<String> before = new ArrayList<>(base);
      before.addAll(TUNED_BEFORE);
      Path helpArchive = workDir.resolve("agent-help-" + majorVersion(java) + ".jsa");
      makeArchive(java, helpArchive, List.of("--help"));
      variants.add(new Variant(label + ", image before tuning", withArchive(before, helpArchive)));
      List<String> tuned = new ArrayList<>(base);
      tuned.addAll(TUNED);
      variants.add(new Variant(label + ", image flags, no archive", tuned));
      Path trained = workDir.resolve("agent-trained-" + majorVersion(java) + ".jsa");
      makeArchive(java, trained, TRAINING_RUN);
      variants.add(
          new Variant(
              label + ", image now (flags + trained archive)", withArchive(tuned, trained)));
    }
    return variants;
  }

  /** The JDK running the tests, and Temurin 25 when installed (this machine has it). */
  private static List<String> jdks() {
    List<String> jdks = new ArrayList<>(List.of(System.getProperty("java.home")));
    Path temurin = Path.of("/usr/lib/jvm/temurin-25-jdk-amd64");
    if (Files.isExecutable(temurin.resolve("bin/java"))) {
      jdks.add(temurin.toString());
    }
    return jdks;
  }

  private static String majorVersion(String java) throws Exception {
    Process p = new ProcessBuilder(java, "-version").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor(30, TimeUnit.SECONDS);
    return out.replaceAll("(?s).*version \"(\\d+).*", "$1");
  }

  /** The Dockerfile's training run: polls an etcd that is not there, stops by itself. */
  public static final List<String> TRAINING_RUN =
      List.of(
          "--etcd-endpoint=http://127.0.0.1:1",
          "--kube=off",
          "--http-host=127.0.0.1",
          "--http-port=0",
          "--exit-after=5s");

  private static List<String> withArchive(List<String> jvm, Path archive) {
    List<String> flags = new ArrayList<>(jvm);
    flags.add("-XX:SharedArchiveFile=" + archive);
    flags.add("-Xshare:auto");
    return flags;
  }

  /** The classes of {@code run <runArgs>}, dumped at exit, with the image's flags. */
  private static void makeArchive(String java, Path archive, List<String> runArgs)
      throws Exception {
    List<String> command = new ArrayList<>(List.of(java, "-XX:ArchiveClassesAtExit=" + archive));
    command.addAll(TUNED);
    command.addAll(List.of("-jar", AgentProcess.jar().toString(), "run"));
    command.addAll(runArgs);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    p.waitFor(120, TimeUnit.SECONDS);
  }

  void run(Report report) throws Exception {
    String endpoint = "http://127.0.0.1:" + FreePorts.next();
    Path data = workDir.resolve("footprint.etcd");
    Process etcd =
        SingleEtcd.start(
            EtcdBinaries.primary(), "fp", data, endpoint, workDir.resolve("footprint-etcd.log"));
    try {
      List<Variant> variants = variants();
      report.section(
          "Start-up",
          "The jar against a running single etcd 3.5, `--data-dir` set, `--kube=off`; from"
              + " process start to the first 200 from /livez and to the first verdict (/status"
              + " shows a poll).");
      for (Variant v : variants) {
        List<Double> livez = new ArrayList<>();
        List<Double> verdict = new ArrayList<>();
        for (int run = 0; run < settings.runs(); run++) {
          int port = FreePorts.next();
          long t0 = System.nanoTime();
          try (AgentProcess agent = start(v, port, endpoint, data)) {
            livez.add(
                DetectionBench.millisUntil(t0, () -> Http.statusOrMinusOne(port, "/livez") == 200));
            verdict.add(
                DetectionBench.millisUntil(
                    t0,
                    () -> {
                      try {
                        return Http.get(port, "/status").body().contains("\"sequence\"");
                      } catch (RuntimeException e) {
                        return false;
                      }
                    }));
          }
        }
        report.row("start → /livez", v.name(), Stats.of(livez).format("ms"), "≤ 500 ms");
        report.row("start → first verdict", v.name(), Stats.of(verdict).format("ms"), "");
      }
      steady(report, variants, endpoint, data);
    } finally {
      Processes.kill(etcd);
    }
  }

  private void steady(Report report, List<Variant> variants, String endpoint, Path data)
      throws Exception {
    Map<Variant, AgentProcess> agents = new LinkedHashMap<>();
    Map<Variant, Integer> ports = new LinkedHashMap<>();
    Map<Variant, Double> cpuAtStart = new LinkedHashMap<>();
    try {
      for (Variant v : variants) {
        int port = FreePorts.next();
        AgentProcess agent = start(v, port, endpoint, data);
        agents.put(v, agent);
        ports.put(v, port);
        DetectionBench.millisUntil(
            System.nanoTime(), () -> Http.statusOrMinusOne(port, "/livez") == 200);
      }
      // warm-up: the first minute of a JVM is not its steady state
      Thread.sleep(Math.min(60_000, settings.steadyWindow().toMillis() / 5));
      for (Variant v : variants) {
        cpuAtStart.put(v, ProcessStats.cpuMillis(agents.get(v).process().pid()));
      }
      long windowStart = System.nanoTime();
      long end = windowStart + settings.steadyWindow().toNanos();
      long tick = 0;
      while (System.nanoTime() < end) {
        for (Variant v : variants) {
          Http.statusOrMinusOne(ports.get(v), "/readyz");
          if (tick % 3 == 0) {
            Http.statusOrMinusOne(ports.get(v), "/metrics");
          }
        }
        tick++;
        Thread.sleep(5000); // the kubelet's probe period and the scrape interval being emulated
      }
      double seconds = (System.nanoTime() - windowStart) / 1e9;
      report.section(
          "Steady state",
          "After a warm-up, "
              + Math.round(seconds)
              + " s of polling at 1s (disk check on, `--kube=off`) while /readyz is fetched every"
              + " 5 s and /metrics every 15 s; all variants side by side against one etcd; one"
              + " window each. CPU in millicores = CPU time / wall time × 1000.");
      for (Variant v : variants) {
        long pid = agents.get(v).process().pid();
        double cpu = (ProcessStats.cpuMillis(pid) - cpuAtStart.get(v)) / seconds;
        String metrics = Http.get(ports.get(v), "/metrics").body();
        report.row("RSS", v.name(), Stats.number(ProcessStats.rssMiB(pid)) + " MiB", "≤ 64 MiB");
        report.row("heap in use", v.name(), Stats.number(heapMiB(metrics)) + " MiB", "");
        report.row("threads", v.name(), Stats.number(ProcessStats.threads(pid)), "");
        report.row("CPU, polling at 1s", v.name(), Stats.number(cpu) + " millicores", "≤ 5");
      }
    } finally {
      agents.values().forEach(AgentProcess::close);
    }
  }

  static double heapMiB(String metrics) {
    double bytes = 0;
    for (String line : metrics.split("\n")) {
      if (line.startsWith("jvm_memory_used_bytes{area=\"heap\"")) {
        bytes += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return bytes / (1024 * 1024);
  }

  private static AgentProcess start(Variant v, int port, String endpoint, Path data) {
    return AgentProcess.startJvm(
        v.jvm(),
        port,
        Map.of(),
        "run",
        "--etcd-endpoint=" + endpoint,
        "--http-host=127.0.0.1",
        "--http-port=" + port,
        "--data-dir=" + data,
        "--kube=off");
  }
}
