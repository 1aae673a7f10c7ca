package io.etcdmemberagent.bench;

import io.etcdmemberagent.kube.FakeKubeApi;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * How soon the agent (the real jar, default poll 1s and etcd timeout 2s) reports a fault: /readyz
 * 503 and the ready condition False at the API stand-in, after the local etcd is killed, is
 * SIGSTOPped, or loses its leader (the two other members killed).
 */
final class DetectionBench {

  private final Settings settings;
  private final Path workDir;

  DetectionBench(Settings settings, Path workDir) {
    this.settings = settings;
    this.workDir = workDir;
  }

  void run(Report report) throws Exception {
    List<Double> killReadyz = new ArrayList<>();
    List<Double> killCondition = new ArrayList<>();
    List<Double> stopReadyz = new ArrayList<>();
    List<Double> stopCondition = new ArrayList<>();
    List<Double> leaderReadyz = new ArrayList<>();
    List<Double> killWrapper = new ArrayList<>();
    List<Double> stopWrapper = new ArrayList<>();
    List<Double> leaderWrapper = new ArrayList<>();
    for (int run = 0; run < settings.runs(); run++) {
      try (EtcdCluster cluster = EtcdCluster.start(EtcdBinaries.primary(), 3);
          FakeKubeApi api = new FakeKubeApi()) {
        api.createPod("etcd", "etcd-0");
        EtcdMember local = cluster.member(0);
        int port = FreePorts.next();
        Path dir = Files.createTempDirectory(workDir, "detect");
        try (AgentProcess agent =
                AgentProcess.start(
                    port,
                    Map.of(),
                    "run",
                    "--etcd-endpoint=" + local.clientUrl(),
                    "--cluster-endpoints=" + cluster.clientUrls(),
                    "--http-host=127.0.0.1",
                    "--http-port=" + port,
                    "--kube=on",
                    "--kubeconfig=" + api.writeKubeconfig(dir),
                    "--pod-name=etcd-0",
                    "--pod-namespace=etcd");
            WrapperProbe wrapper = new WrapperProbe(local.clientUrl())) {
          awaitReady(port, api, wrapper);
          long t0 = System.nanoTime();
          local.kill();
          killReadyz.add(millisUntil(t0, () -> readyz(port) == 503));
          killCondition.add(millisUntil(t0, () -> conditionFalse(api)));
          killWrapper.add(millisUntil(t0, () -> !wrapper.ready()));
          local.restart();
          awaitReady(port, api, wrapper);

          t0 = System.nanoTime();
          local.pause();
          stopReadyz.add(millisUntil(t0, () -> readyz(port) == 503));
          stopCondition.add(millisUntil(t0, () -> conditionFalse(api)));
          stopWrapper.add(millisUntil(t0, () -> !wrapper.ready()));
          local.resume();
          awaitReady(port, api, wrapper);

          t0 = System.nanoTime();
          cluster.member(1).kill();
          cluster.member(2).kill();
          leaderReadyz.add(millisUntil(t0, () -> readyz(port) == 503));
          leaderWrapper.add(millisUntil(t0, () -> !wrapper.ready()));
        }
      }
    }
    report.section(
        "Detection",
        "A 3-member etcd "
            + io.etcdmemberagent.testing.EtcdBinaries.patchVersion(
                io.etcdmemberagent.testing.EtcdBinaries.primary())
            + " cluster, the agent jar next to member 0 with its defaults (poll 1s,"
            + " etcd timeout 2s), /readyz sampled every 5 ms, the API stand-in's condition every"
            + " 5 ms. Goal: poll interval + etcd timeout + 50 ms = 3050 ms. The emulated"
            + " etcd-wrapper probe runs against the same member in the same runs.");
    String goal = "≤ 3050 ms";
    report.row("etcd killed → /readyz 503", "ours", Stats.of(killReadyz).format("ms"), goal);
    report.row(
        "etcd killed → ready False at the API", "ours", Stats.of(killCondition).format("ms"), goal);
    report.row("etcd SIGSTOPped → /readyz 503", "ours", Stats.of(stopReadyz).format("ms"), goal);
    report.row(
        "etcd SIGSTOPped → ready False at the API",
        "ours",
        Stats.of(stopCondition).format("ms"),
        goal);
    report.row(
        "leader lost (2 of 3 killed) → /readyz 503",
        "ours",
        Stats.of(leaderReadyz).format("ms"),
        "≤ 3050 ms + etcd's election timeout (1 s here)");
    String wrapperName = "etcd-wrapper (linearizable get every 2s, 5s timeout)";
    report.row("etcd killed → not ready", wrapperName, Stats.of(killWrapper).format("ms"), "");
    report.row("etcd SIGSTOPped → not ready", wrapperName, Stats.of(stopWrapper).format("ms"), "");
    report.row(
        "leader lost (2 of 3 killed) → not ready",
        wrapperName,
        Stats.of(leaderWrapper).format("ms"),
        "");
    report.row(
        "any of these → Pod not ready",
        "readiness probe alone (kubelet defaults: period 10s, 3 failures)",
        "the check's own delay + 20000 to 30000 ms (three failed probes 10 s apart; by"
            + " configuration, not measured)",
        "");
  }

  private static void awaitReady(int port, FakeKubeApi api, WrapperProbe wrapper) {
    Poll.until(
        "ready, True at the API, and the emulated etcd-wrapper ready",
        Duration.ofSeconds(60),
        () -> readyz(port) == 200 && readyTrue(api) && wrapper.ready());
  }

  private static boolean readyTrue(FakeKubeApi api) {
    return readyStatus(api).equals("True");
  }

  private static boolean conditionFalse(FakeKubeApi api) {
    return readyStatus(api).equals("False");
  }

  static String readyStatus(FakeKubeApi api) {
    for (var e : api.conditions("etcd", "etcd-0")) {
      var c = e.getAsJsonObject();
      if (c.get("type").getAsString().equals("etcd-member-agent.io/ready")) {
        return c.get("status").getAsString();
      }
    }
    return "";
  }

  private static int readyz(int port) {
    return Http.statusOrMinusOne(port, "/readyz");
  }

  static double millisUntil(long t0, BooleanSupplier condition) {
    long deadline = t0 + Duration.ofSeconds(60).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return Double.NaN;
      }
      try {
        Thread.sleep(5); // the sampling step of the measurement, bounded by the deadline
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Double.NaN;
      }
    }
    return (System.nanoTime() - t0) / 1e6;
  }
}
