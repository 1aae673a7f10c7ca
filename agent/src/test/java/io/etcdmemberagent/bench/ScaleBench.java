package io.etcdmemberagent.bench;

import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What one agent costs as the cluster grows: 3, 5 and 7 members with an agent next to each (poll
 * 1s, the image's JVM flags), over one window: etcd RPCs per poll (etcd's own counters over all
 * members, divided by all agents' polls) and CPU per agent.
 */
final class ScaleBench {

  private final Settings settings;

  ScaleBench(Settings settings) {
    this.settings = settings;
  }

  void run(Report report) throws Exception {
    Duration window = settings.scaleWindow();
    report.section(
        "Cost per agent as the cluster grows",
        "An etcd "
            + io.etcdmemberagent.testing.EtcdBinaries.patchVersion(
                io.etcdmemberagent.testing.EtcdBinaries.primary())
            + " cluster of N members with one agent next to each (poll 1s, --kube=off, the"
            + " image's JVM flags without the archive), all on this machine; after every agent is"
            + " ready and a warm-up of "
            + warmUp(window).toSeconds()
            + " s (JIT compilation is not steady state), a "
            + window.toSeconds()
            + " s window. The agent asks only its own member and the cluster endpoints for the"
            + " member list, so the per-agent cost should not grow with N.");
    for (int size : settings.clusterSizes()) {
      measure(size, window, report);
    }
  }

  private static void measure(int size, Duration window, Report report) throws Exception {
    try (EtcdCluster cluster = EtcdCluster.start(EtcdBinaries.primary(), size)) {
      List<AgentProcess> agents = new ArrayList<>();
      try {
        for (EtcdMember member : cluster.members()) {
          agents.add(start(cluster, member));
        }
        for (AgentProcess agent : agents) {
          Poll.until(
              "every agent ready",
              Duration.ofSeconds(60),
              () -> Http.statusOrMinusOne(agent.port(), "/readyz") == 200);
        }
        Thread.sleep(warmUp(window).toMillis()); // not measured
        double calls0 = LoadBench.grpcCalls(cluster, List.of());
        double polls0 = totalPolls(agents);
        double cpu0 = totalCpuMillis(agents);
        long t0 = System.nanoTime();
        Thread.sleep(window.toMillis()); // the window being measured
        double seconds = (System.nanoTime() - t0) / 1e9;
        double calls = LoadBench.grpcCalls(cluster, List.of()) - calls0;
        double polls = totalPolls(agents) - polls0;
        double cpu = totalCpuMillis(agents) - cpu0;
        report.row(
            "etcd RPCs per poll",
            size + " members, " + size + " agents",
            Stats.number(calls / polls)
                + " ("
                + Math.round(calls)
                + " calls / "
                + Math.round(polls)
                + " polls)",
            "≤ 3");
        report.row(
            "CPU per agent",
            size + " members, " + size + " agents",
            Stats.number(cpu / size / seconds) + " millicores",
            "≤ 5");
      } finally {
        agents.forEach(AgentProcess::close);
      }
    }
  }

  private static Duration warmUp(Duration window) {
    return window.dividedBy(2).compareTo(Duration.ofSeconds(60)) < 0
        ? window.dividedBy(2)
        : Duration.ofSeconds(60);
  }

  private static AgentProcess start(EtcdCluster cluster, EtcdMember member) {
    int port = FreePorts.next();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> jvm = new ArrayList<>(List.of(java, "-XX:MaxRAM=256m"));
    jvm.addAll(FootprintBench.TUNED);
    return AgentProcess.startJvm(
        jvm,
        port,
        Map.of(),
        "run",
        "--etcd-endpoint=" + member.clientUrl(),
        "--cluster-endpoints=" + cluster.clientUrls(),
        "--http-host=127.0.0.1",
        "--http-port=" + port,
        "--kube=off");
  }

  private static double totalPolls(List<AgentProcess> agents) {
    double total = 0;
    for (AgentProcess agent : agents) {
      total += LoadBench.polls(agent.port());
    }
    return total;
  }

  private static double totalCpuMillis(List<AgentProcess> agents) {
    double total = 0;
    for (AgentProcess agent : agents) {
      total += ProcessStats.cpuMillis(agent.process().pid());
    }
    return total;
  }
}
