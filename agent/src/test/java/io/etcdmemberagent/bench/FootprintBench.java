package io.etcdmemberagent.bench;

import io.etcdmemberagent.kube.FakeKubeApi;
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
import java.util.Optional;

/**
 * What one agent costs: start-up to the first /livez and to the first verdict, and after a steady
 * window of polling at 1s with the disk check and Kubernetes on (against the API stand-in) while
 * being scraped like a kubelet and Prometheus would (/readyz every 5 s, /metrics every 15 s):
 * resident memory, heap in use, threads, CPU and CPU by thread. The image before this round (its
 * flags and CDS archive; on JDK 17 and 25; with the agent built before, {@code -Dbench.beforeJar},
 * when given) side by side with the image now (JDK 25, its flags and the ahead-of-time cache made
 * by {@link #TRAINING_SCRIPT}, as the Dockerfile makes it). Every variant gets {@code
 * -XX:MaxRAM=256m}, what the JVM sees under the chart's limit. The steady windows run side by side.
 */
public final class FootprintBench {

  /**
   * The image's flags before #19 (JDK 21 distroless with a CDS archive), kept apart from {@link
   * #TUNED} so that a change to the image's flags leaves the "before" rows as they were.
   */
  static final List<String> IMAGE_BEFORE =
      List.of(
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          "-XX:MaxRAMPercentage=60",
          "-XX:MinHeapFreeRatio=5",
          "-XX:MaxHeapFreeRatio=20",
          "-Xss512k",
          "-XX:-UsePerfData",
          "-Dio.netty.allocator.type=unpooled");

  /** The CDS archive's training run before #19: polls an etcd that is not there. */
  static final List<String> TRAINING_BEFORE =
      List.of(
          "--etcd-endpoint=http://127.0.0.1:1",
          "--kube=off",
          "--http-host=127.0.0.1",
          "--http-port=0",
          "--exit-after=5s");

  /**
   * C1 compiles a method after 10 calls instead of 200: at one poll a second the poll's code would
   * otherwise run interpreted for minutes (each call once or a few times per poll).
   */
  static final String COMPILE_EARLY = "-XX:CompileThresholdScaling=0.05";

  /** The Dockerfile's ENTRYPOINT flags besides the cache (DockerfileTest keeps them in step). */
  public static final List<String> TUNED =
      List.of(
          "-XX:+UseSerialGC",
          "-XX:TieredStopAtLevel=1",
          COMPILE_EARLY,
          "-XX:MaxRAMPercentage=60",
          "-XX:MinHeapFreeRatio=5",
          "-XX:MaxHeapFreeRatio=20",
          "-Xss512k",
          "-XX:-UsePerfData",
          "-Dio.netty.allocator.type=unpooled");

  /** Makes the image's ahead-of-time cache; the Dockerfile runs the same script. */
  public static final String TRAINING_SCRIPT = "deploy/image/aot-training.sh";

  public static final Path TEMURIN_25 = Path.of("/usr/lib/jvm/temurin-25-jdk-amd64");

  record Variant(String name, List<String> jvm, Path jar) {}

  private final Settings settings;
  private final Path workDir;

  FootprintBench(Settings settings, Path workDir) {
    this.settings = settings;
    this.workDir = workDir;
  }

  /**
   * The agent as built before this round when {@code -Dbench.beforeJar} names it, else this one.
   */
  static Path beforeJar() {
    String before = System.getProperty("bench.beforeJar", "");
    return before.isBlank() ? AgentProcess.jar() : Path.of(before);
  }

  /** The image's JVM: Temurin 25 when installed (this machine has it), else the test's JDK. */
  static String imageJava() {
    Path java = TEMURIN_25.resolve("bin/java");
    return Files.isExecutable(java)
        ? java.toString()
        : Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  List<Variant> variants() throws Exception {
    List<Variant> variants = new ArrayList<>();
    String java17 = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String java25 = imageJava();
    int major17 = majorVersion(java17);
    variants.add(
        new Variant(
            "JDK " + major17 + ", default flags",
            List.of(java17, "-XX:MaxRAM=256m"),
            AgentProcess.jar()));
    Map<String, Integer> jdks = new LinkedHashMap<>(Map.of(java17, major17));
    jdks.put(java25, java25.equals(java17) ? major17 : majorVersion(java25));
    // the smoke run keeps the image as it is now; "before" makes an archive per JDK (a training
    // run each), for the full run's comparison only
    if (!settings.mode().equals("smoke")) {
      for (Map.Entry<String, Integer> jdk : jdks.entrySet()) {
        Path archive = workDir.resolve("before-" + jdk.getValue() + ".jsa");
        makeArchive(jdk.getKey(), archive);
        List<String> jvm = new ArrayList<>(List.of(jdk.getKey(), "-XX:MaxRAM=256m"));
        jvm.addAll(IMAGE_BEFORE);
        jvm.add("-XX:SharedArchiveFile=" + archive);
        jvm.add("-Xshare:auto");
        variants.add(new Variant("JDK " + jdk.getValue() + ", image before", jvm, beforeJar()));
      }
    }
    if (jdks.get(java25) >= 25) {
      variants.add(image("JDK 25, image now", java25, AgentProcess.jar(), "agent.aot"));
      Optional<Path> previous = previousJar();
      if (previous.isPresent()) {
        variants.add(
            image("JDK 25, image now, previous jar", java25, previous.get(), "previous.aot"));
      }
    }
    return variants;
  }

  /** {@code jar} as the image runs it: the image's flags and a cache trained on that jar. */
  private Variant image(String name, String java, Path jar, String cacheName) {
    Path cache = workDir.resolve(cacheName);
    train(java, cache, jar);
    List<String> jvm = new ArrayList<>(List.of(java, "-XX:MaxRAM=256m"));
    jvm.addAll(TUNED);
    jvm.add("-XX:AOTCache=" + cache);
    return new Variant(name, jvm, jar);
  }

  private static int majorVersion(String java) {
    String said = Processes.output(java, "-version");
    return Integer.parseInt(said.replaceAll("(?s).*version \"(\\d+).*", "$1"));
  }

  /** The CDS archive as the image before made it: the classes of its training run, at exit. */
  private static void makeArchive(String java, Path archive) {
    List<String> command = new ArrayList<>(List.of(java, "-XX:ArchiveClassesAtExit=" + archive));
    command.addAll(IMAGE_BEFORE);
    command.addAll(List.of("-jar", beforeJar().toString(), "run"));
    command.addAll(TRAINING_BEFORE);
    Processes.run(Map.of(), 120, command);
  }

  /**
   * An earlier build of this round ({@code -Dbench.previousJar}), run with the image's flags and a
   * cache of its own, so that one step's effect shows beside the others in the same run.
   */
  static Optional<Path> previousJar() {
    String previous = System.getProperty("bench.previousJar", "");
    return previous.isBlank() ? Optional.empty() : Optional.of(Path.of(previous));
  }

  /** The image's ahead-of-time cache for {@code jar}, made by the Dockerfile's training script. */
  private void train(String java, Path cache, Path jar) {
    List<String> command =
        new ArrayList<>(
            List.of(
                "sh",
                Path.of("..").resolve(TRAINING_SCRIPT).toString(),
                EtcdBinaries.etcd(EtcdBinaries.primary()).toString(),
                jar.toString(),
                cache.toString(),
                java));
    command.addAll(TUNED);
    Processes.Result training = runTraining(command, workDir.resolve("aot-training-agent.log"));
    if (training.exitCode() != 0 || !Files.isRegularFile(cache)) {
      throw new IllegalStateException("the training run failed:\n" + training.output());
    }
    Processes.Result uses = versionWithCache(java, cache, jar);
    if (uses.exitCode() != 0) {
      throw new IllegalStateException(
          "the JVM refuses the cache it trained (AOTMode=on):\n" + uses.output());
    }
  }

  /**
   * Runs the training script's {@code command} on free ports, keeping the agent's log at {@code
   * agentLog}.
   */
  public static Processes.Result runTraining(List<String> command, Path agentLog) {
    Map<String, String> env =
        Map.of(
            "TRAIN_PORTS",
            FreePorts.next() + " " + FreePorts.next() + " " + FreePorts.next(),
            "TRAIN_LOG",
            agentLog.toString());
    return Processes.run(env, 300, command);
  }

  /**
   * {@code version} with the cache and the image's flags under {@code -XX:AOTMode=on}, which fails
   * when the JVM cannot use the cache; logs what it maps ({@code -Xlog:aot=info}).
   */
  public static Processes.Result versionWithCache(String java, Path cache) {
    return versionWithCache(java, cache, AgentProcess.jar());
  }

  private static Processes.Result versionWithCache(String java, Path cache, Path jar) {
    List<String> command =
        new ArrayList<>(List.of(java, "-XX:AOTCache=" + cache, "-XX:AOTMode=on", "-Xlog:aot=info"));
    command.addAll(TUNED);
    command.addAll(List.of("-jar", jar.toString(), "version"));
    return Processes.run(Map.of(), 60, command);
  }

  void run(Report report) throws Exception {
    String endpoint = "http://127.0.0.1:" + FreePorts.next();
    Path data = workDir.resolve("footprint.etcd");
    Process etcd =
        SingleEtcd.start(
            EtcdBinaries.primary(), "fp", data, endpoint, workDir.resolve("footprint-etcd.log"));
    try (FakeKubeApi api = new FakeKubeApi()) {
      Path kubeconfig = api.writeKubeconfig(Files.createTempDirectory(workDir, "fp-kube"));
      List<Variant> variants = variants();
      report.section(
          "Start-up",
          "The jar against a running single etcd, `--data-dir` set, Kubernetes on (the API"
              + " stand-in); from process start to the first 200 from /livez and to the first"
              + " verdict (/status shows a poll); the variants take turns, one start each per"
              + " round. \"Before\" runs the agent built before this round when `BEFORE_JAR` is"
              + " given.");
      // Runs interleaved (each variant once per round): a variant measured after the others
      // started ~20 ms faster when each ran its five starts in a row, whatever the jar.
      Map<Variant, List<Double>> livez = new LinkedHashMap<>();
      Map<Variant, List<Double>> verdict = new LinkedHashMap<>();
      int pods = 0;
      for (int run = 0; run < settings.runs(); run++) {
        for (Variant v : variants) {
          int port = FreePorts.next();
          String pod = "fp-" + pods++;
          api.createPod("etcd", pod);
          long t0 = System.nanoTime();
          try (AgentProcess agent = start(v, port, endpoint, data, kubeconfig, pod)) {
            livez
                .computeIfAbsent(v, k -> new ArrayList<>())
                .add(
                    DetectionBench.millisUntil(
                        t0, () -> Http.statusOrMinusOne(port, "/livez") == 200));
            verdict
                .computeIfAbsent(v, k -> new ArrayList<>())
                .add(DetectionBench.millisUntil(t0, () -> polled(port)));
          }
        }
      }
      for (Variant v : variants) {
        report.row("start → /livez", v.name(), Stats.of(livez.get(v)).format("ms"), "≤ 500 ms");
        report.row("start → first verdict", v.name(), Stats.of(verdict.get(v)).format("ms"), "");
      }
      steady(report, variants, endpoint, data, api, kubeconfig);
    } finally {
      Processes.kill(etcd);
    }
  }

  /** /status shows a poll. */
  private static boolean polled(int port) {
    try {
      return Http.get(port, "/status").body().contains("\"sequence\"");
    } catch (RuntimeException e) {
      return false;
    }
  }

  private void steady(
      Report report,
      List<Variant> variants,
      String endpoint,
      Path data,
      FakeKubeApi api,
      Path kubeconfig)
      throws Exception {
    Map<Variant, AgentProcess> agents = new LinkedHashMap<>();
    Map<Variant, Integer> ports = new LinkedHashMap<>();
    Map<Variant, Double> cpuAtStart = new LinkedHashMap<>();
    Map<Variant, Map<String, Double>> threadsAtStart = new LinkedHashMap<>();
    try {
      for (Variant v : variants) {
        int port = FreePorts.next();
        String pod = "fp-steady-" + ports.size();
        api.createPod("etcd", pod);
        AgentProcess agent = start(v, port, endpoint, data, kubeconfig, pod);
        agents.put(v, agent);
        ports.put(v, port);
        DetectionBench.millisUntil(
            System.nanoTime(), () -> Http.statusOrMinusOne(port, "/livez") == 200);
      }
      // warm-up: the first minute of a JVM is not its steady state
      Thread.sleep(Math.min(60_000, settings.steadyWindow().toMillis() / 5));
      for (Variant v : variants) {
        long pid = agents.get(v).process().pid();
        cpuAtStart.put(v, ProcessStats.cpuMillis(pid));
        threadsAtStart.put(v, ProcessStats.cpuMillisByThread(pid));
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
              + " s of polling at 1s (disk check on, Kubernetes on against the API stand-in)"
              + " while /readyz is fetched every 5 s and /metrics every 15 s; all variants side by"
              + " side against one etcd; one window each. CPU in millicores = CPU time / wall"
              + " time × 1000; by thread from /proc/PID/task (threads named alike summed).");
      for (Variant v : variants) {
        long pid = agents.get(v).process().pid();
        double cpu = (ProcessStats.cpuMillis(pid) - cpuAtStart.get(v)) / seconds;
        String metrics = Http.get(ports.get(v), "/metrics").body();
        report.row("RSS", v.name(), Stats.number(ProcessStats.rssMiB(pid)) + " MiB", "≤ 64 MiB");
        report.row(
            "RSS, anonymous (no file behind it)",
            v.name(),
            Stats.number(ProcessStats.anonymousMiB(pid)) + " MiB",
            "");
        report.row("heap in use", v.name(), Stats.number(heapMiB(metrics)) + " MiB", "");
        report.row("threads", v.name(), Stats.number(ProcessStats.threads(pid)), "");
        report.row("CPU, polling at 1s", v.name(), Stats.number(cpu) + " millicores", "≤ 5");
        report.row(
            "CPU by thread",
            v.name(),
            byThread(threadsAtStart.get(v), ProcessStats.cpuMillisByThread(pid), seconds),
            "");
      }
    } finally {
      agents.values().forEach(AgentProcess::close);
    }
  }

  /** The threads that used at least 0.1 millicores, busiest first. */
  static String byThread(Map<String, Double> before, Map<String, Double> after, double seconds) {
    List<Map.Entry<String, Double>> used = new ArrayList<>();
    after.forEach(
        (name, millis) -> {
          double millicores = (millis - before.getOrDefault(name, 0.0)) / seconds;
          if (millicores >= 0.1) {
            used.add(Map.entry(name, millicores));
          }
        });
    used.sort(Map.Entry.<String, Double>comparingByValue().reversed());
    List<String> parts = new ArrayList<>();
    for (Map.Entry<String, Double> e : used) {
      parts.add(e.getKey() + " " + Stats.number(e.getValue()));
    }
    return parts.isEmpty() ? "-" : String.join(", ", parts);
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

  private static AgentProcess start(
      Variant v, int port, String endpoint, Path data, Path kubeconfig, String pod) {
    return AgentProcess.startJar(
        v.jvm(),
        v.jar(),
        port,
        Map.of(),
        "run",
        "--etcd-endpoint=" + endpoint,
        "--http-host=127.0.0.1",
        "--http-port=" + port,
        "--data-dir=" + data,
        "--kube=on",
        "--kubeconfig=" + kubeconfig,
        "--pod-name=" + pod,
        "--pod-namespace=etcd");
  }
}
