package io.etcdmemberagent.bench;

import io.etcdmemberagent.kube.FakeKubeApi;
import io.etcdmemberagent.testing.AgentProcess;
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
    for (int run = 0; run < settings.runs(); run++) {
      try (EtcdCluster cluster = EtcdCluster.start("3.5", 3);
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
                "--pod-namespace=etcd")) {
          awaitReady(port, api);
          long t0 = System.nanoTime();
          local.kill();
          killReadyz.add(millisUntil(t0, () -> readyz(port) == 503));
          killCondition.add(millisUntil(t0, () -> conditionFalse(api)));
          local.restart();
          awaitReady(port, api);

          t0 = System.nanoTime();
          local.pause();
          stopReadyz.add(millisUntil(t0, () -> readyz(port) == 503));
          stopCondition.add(millisUntil(t0, () -> conditionFalse(api)));
          local.resume();
          awaitReady(port, api);

          t0 = System.nanoTime();
          cluster.member(1).kill();
          cluster.member(2).kill();
          leaderReadyz.add(millisUntil(t0, () -> readyz(port) == 503));
        }
      }
    }
    report.section(
        "Detection",
        "A 3-member etcd 3.5 cluster, the agent jar next to member 0 with its defaults (poll 1s,"
            + " etcd timeout 2s), /readyz sampled every 5 ms, the API stand-in's condition every"
            + " 5 ms. Goal: poll interval + etcd timeout + 50 ms = 3050 ms.");
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
    report.row(
        "readiness-probe-only setup (kubelet defaults: period 10s, 3 failures)",
        "kubelet",
        "up to 30000 ms (by its configuration, not measured)",
        "");
  }

  private static void awaitReady(int port, FakeKubeApi api) {
    Poll.until(
        "ready, and True at the API",
        Duration.ofSeconds(60),
        () -> readyz(port) == 200 && readyTrue(api));
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
