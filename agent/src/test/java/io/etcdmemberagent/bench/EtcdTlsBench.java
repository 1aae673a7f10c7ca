package io.etcdmemberagent.bench;

import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.KubeNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What the chart's default TLS costs, beside plain HTTP in the same run on the same node: the time
 * from {@code helm install} to 3 Ready voters (join issues every member's certificates at start),
 * write latency seen by an application from the node's host (one member's client port, mutual TLS
 * with the certificate of {@code <release>-client-tls}, or plain), and the CPU of etcd and of the
 * agent over a steady window (the agent polls its member over mutual TLS).
 */
final class EtcdTlsBench {

  private final Settings settings;
  private final Path dir;

  EtcdTlsBench(Settings settings, Path dir) {
    this.settings = settings;
    this.dir = dir;
  }

  void run(Report report) throws Exception {
    KubeNode node = KubeNode.shared();
    report.section(
        "etcd's TLS: the chart's default beside plain HTTP",
        "Two installs one after the other on the node of `test-e2e/kube-node.sh` (etcd 3.6, 3"
            + " members, the agent's own image): the chart's defaults (peer and client TLS with"
            + " client certificates, issued by join from the CA it keeps in `<release>-ca`) and the"
            + " same with `tls.peer.enabled=false,tls.client.enabled=false`. Writes: "
            + writes()
            + " sequential 64-byte puts from the node's host to one member's client port.");
    measure(
        node,
        ChartRelease.withChartDefaults(node, "tls-bench", "tls-bench"),
        "TLS (default)",
        report);
    measure(
        node,
        new ChartRelease(node, "plain-bench", "plain-bench", new EtcdTestClient()),
        "plain HTTP",
        report);
  }

  private int writes() {
    return settings.mode().equals("smoke") ? 200 : 2000;
  }

  private void measure(KubeNode node, ChartRelease db, String variant, Report report)
      throws Exception {
    node.kubectl("create", "namespace", db.namespace());
    try {
      long started = System.nanoTime();
      db.install();
      if (variant.startsWith("TLS")) {
        db.useApplicationsCertificate(dir);
      }
      db.awaitReadyVoters(3, Duration.ofMinutes(5));
      double ready = (System.nanoTime() - started) / 1e9;
      report.row(
          "`helm install` to 3 Ready voters (30 s of it: `agent.bootstrapWait`)",
          variant,
          String.format("%.1f s", ready),
          "");
      EtcdTestClient client = db.client();
      String url = db.clientUrl(db.podIps().get(db.pod(0)));
      byte[] value = new byte[64];
      for (int i = 0; i < 50; i++) {
        client.put(url, "warm/" + i, value); // the connection and its handshake, not measured
      }
      List<Double> millis = new ArrayList<>();
      for (int i = 0; i < writes(); i++) {
        long t = System.nanoTime();
        client.put(url, "bench/" + i, value);
        millis.add((System.nanoTime() - t) / 1e6);
      }
      List<Double> sorted = millis.stream().sorted().toList();
      double p99 = sorted.get((int) Math.ceil(0.99 * sorted.size()) - 1);
      report.row(
          "put latency, one client, sequential",
          variant,
          String.format(
              "%.2f ms median, %.2f ms p99 (max %.1f ms, %d puts)",
              Stats.of(millis).median(), p99, sorted.get(sorted.size() - 1), sorted.size()),
          "");

      List<Long> etcdPids = new ArrayList<>();
      List<Long> agentPids = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        etcdPids.add(
            node.inspect(node.containerId(db.namespace(), db.pod(i), "etcd"))
                .get("pid")
                .getAsLong());
        agentPids.add(
            node.inspect(node.containerId(db.namespace(), db.pod(i), "agent"))
                .get("pid")
                .getAsLong());
      }
      List<Double> etcdBefore = cpu(etcdPids);
      List<Double> agentBefore = cpu(agentPids);
      long t0 = System.nanoTime();
      Thread.sleep(settings.steadyWindow().toMillis()); // the window measured, not a wait for state
      double window = (System.nanoTime() - t0) / 1e6;
      report.row(
          "etcd CPU, idle cluster, over " + settings.steadyWindow().toSeconds() + " s",
          variant,
          Stats.of(rate(cpu(etcdPids), etcdBefore, window)).format("millicores"),
          "");
      report.row(
          "agent CPU (poll 1 s) over " + settings.steadyWindow().toSeconds() + " s",
          variant,
          Stats.of(rate(cpu(agentPids), agentBefore, window)).format("millicores"),
          "");
    } finally {
      try {
        db.uninstall();
        db.client().close();
      } finally {
        node.tool("kubectl", 300, "delete", "namespace", db.namespace(), "--wait=true");
      }
    }
  }

  private static List<Double> cpu(List<Long> pids) {
    return pids.stream().map(ProcessStats::cpuMillis).toList();
  }

  private static List<Double> rate(List<Double> after, List<Double> before, double windowMillis) {
    List<Double> out = new ArrayList<>();
    for (int i = 0; i < after.size(); i++) {
      out.add((after.get(i) - before.get(i)) / windowMillis * 1000);
    }
    return out;
  }
}
