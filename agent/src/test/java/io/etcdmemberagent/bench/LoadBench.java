package io.etcdmemberagent.bench;

import io.etcdmemberagent.kube.FakeKubeApi;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Pod;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The load the agent puts on etcd and on the API server: gRPC calls per poll counted by etcd itself
 * (grpc_server_handled_total on every member) for an agent next to a follower, next to the leader
 * and next to a started learner; and API writes in a steady state at the stand-in.
 */
final class LoadBench {

  private final Settings settings;
  private final Path workDir;
  private String apiRequestsPerHour = "not measured";

  LoadBench(Settings settings, Path workDir) {
    this.settings = settings;
    this.workDir = workDir;
  }

  void run(Report report) throws Exception {
    report.section(
        "Load on etcd and the API server",
        "etcd's own counter of handled gRPC calls, summed over all members, divided by the"
            + " agent's polls over the same window (nothing else talks gRPC to the cluster). API"
            + " writes: PATCH and POST requests at the stand-in after the first Ready, over a"
            + " steady window of "
            + settings.apiWindow().toSeconds()
            + " s (resync 5m default), scaled to an hour.");
    try (EtcdCluster cluster = EtcdCluster.start(EtcdBinaries.primary(), 3);
        FakeKubeApi api = new FakeKubeApi()) {
      EtcdMember leader = cluster.leader().orElseThrow();
      EtcdMember follower =
          cluster.members().stream().filter(m -> m != leader).findFirst().orElseThrow();
      report.row(
          "etcd RPCs per poll",
          "next to a follower",
          rpcsPerPoll(cluster, follower, List.of()),
          "≤ 3");
      report.row(
          "etcd RPCs per poll",
          "next to the leader",
          rpcsPerPoll(cluster, leader, List.of()),
          "≤ 3");
      report.row(
          "etcd RPCs per poll",
          "next to a started learner (--promote=false)",
          learner(cluster),
          "≤ 3");
      report.row("API writes per hour, steady", "ours", apiWrites(cluster, follower, api), "0");
      report.row(
          "API requests per hour, steady, all verbs",
          "one agent → 100 agents (×100: agents share no API state)",
          apiRequestsPerHour,
          "");
    }
  }

  private String rpcsPerPoll(EtcdCluster cluster, EtcdMember local, List<String> extra)
      throws Exception {
    int port = FreePorts.next();
    String[] args = args(cluster, local.clientUrl(), port, extra);
    try (AgentProcess agent = AgentProcess.start(port, Map.of(), args)) {
      return measureRpcs(cluster, port, List.of());
    }
  }

  private String measureRpcs(EtcdCluster cluster, int port, List<String> moreMembers)
      throws Exception {
    Poll.until("the agent polls", Duration.ofSeconds(30), () -> polls(port) >= 3);
    double calls0 = grpcCalls(cluster, moreMembers);
    double polls0 = polls(port);
    Thread.sleep(Math.max(5000, settings.apiWindow().toMillis() / 10)); // a measuring window
    double calls = grpcCalls(cluster, moreMembers) - calls0;
    double polls = polls(port) - polls0;
    return Stats.number(calls / polls)
        + " ("
        + Math.round(calls)
        + " calls / "
        + Math.round(polls)
        + " polls)";
  }

  private String learner(EtcdCluster cluster) throws Exception {
    Path dir = Files.createTempDirectory(workDir, "learner");
    try (Pod learner = new Pod("learner", EtcdBinaries.etcd(EtcdBinaries.primary()), dir)) {
      List<String> voters = Arrays.asList(cluster.clientUrls().split(","));
      if (learner.join(voters) != 0) {
        throw new IllegalStateException(learner.lastJoinOutput);
      }
      learner.startEtcd();
      Poll.until(
          "the learner serves",
          Duration.ofSeconds(60),
          () -> {
            try {
              return cluster.client().status(learner.clientUrl(), 300).getIsLearner();
            } catch (RuntimeException e) {
              return false;
            }
          });
      learner.startAgent(voters, "--promote=false");
      return measureRpcs(cluster, learner.httpPort(), List.of(learner.clientUrl()))
          + "; a learner polls every 200 ms";
    }
  }

  private String apiWrites(EtcdCluster cluster, EtcdMember local, FakeKubeApi api)
      throws Exception {
    api.createPod("etcd", "etcd-0");
    int port = FreePorts.next();
    Path dir = Files.createTempDirectory(workDir, "api");
    String[] args =
        args(
            cluster,
            local.clientUrl(),
            port,
            List.of(
                "--kube=on",
                "--kubeconfig=" + api.writeKubeconfig(dir),
                "--pod-name=etcd-0",
                "--pod-namespace=etcd"));
    try (AgentProcess agent = AgentProcess.start(port, Map.of(), args)) {
      Poll.until(
          "ready True at the API",
          Duration.ofSeconds(60),
          () -> DetectionBench.readyStatus(api).equals("True"));
      Thread.sleep(3000); // let the first transitions' writes and events finish
      int before = writes(api).size();
      int requestsBefore = api.requests().size();
      Thread.sleep(settings.apiWindow().toMillis()); // the steady window being measured
      List<String> all = writes(api);
      List<String> during = all.subList(before, all.size());
      List<FakeKubeApi.Request> requests =
          api.requests().subList(requestsBefore, api.requests().size());
      double scale = 3600.0 / settings.apiWindow().toSeconds();
      Map<String, Long> byVerb =
          requests.stream()
              .collect(
                  java.util.stream.Collectors.groupingBy(
                      FakeKubeApi.Request::method,
                      java.util.TreeMap::new,
                      java.util.stream.Collectors.counting()));
      apiRequestsPerHour =
          Stats.number(requests.size() * scale)
              + " → "
              + Stats.number(requests.size() * scale * 100)
              + " ("
              + (byVerb.isEmpty() ? "none" : byVerb.toString())
              + " in "
              + settings.apiWindow().toSeconds()
              + " s; a resync GET every 5 min is 12/h per agent)";
      double perHour = during.size() * 3600.0 / settings.apiWindow().toSeconds();
      return Stats.number(perHour)
          + " ("
          + during.size()
          + " in "
          + settings.apiWindow().toSeconds()
          + " s"
          + (during.isEmpty() ? "" : ": " + String.join("; ", during))
          + ")";
    }
  }

  /** The writes so far, each as method, path and the start of its body. */
  private static List<String> writes(FakeKubeApi api) {
    return api.requests().stream()
        .filter(r -> r.method().equals("PATCH") || r.method().equals("POST"))
        .map(
            r ->
                r.method()
                    + " "
                    + r.path()
                    + " "
                    + r.body().substring(0, Math.min(160, r.body().length())))
        .toList();
  }

  private static String[] args(EtcdCluster cluster, String endpoint, int port, List<String> extra) {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "run",
                "--etcd-endpoint=" + endpoint,
                "--cluster-endpoints=" + cluster.clientUrls(),
                "--http-host=127.0.0.1",
                "--http-port=" + port,
                "--kube=off"));
    if (!extra.isEmpty()) {
      args.remove("--kube=off");
      args.addAll(extra);
    }
    return args.toArray(String[]::new);
  }

  static double polls(int port) {
    for (String line : Http.get(port, "/metrics").body().split("\n")) {
      if (line.startsWith("etcd_member_agent_polls_total")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  static double grpcCalls(EtcdCluster cluster, List<String> moreMembers) {
    double total = 0;
    List<String> urls = new java.util.ArrayList<>(moreMembers);
    cluster.members().forEach(m -> urls.add(m.clientUrl()));
    for (String url : urls) {
      String metrics = fetch(url + "/metrics");
      for (String line : metrics.split("\n")) {
        if (line.startsWith("grpc_server_handled_total{")) {
          total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
      }
    }
    return total;
  }

  private static String fetch(String url) {
    var uri = java.net.URI.create(url);
    return Http.get(uri.getHost(), uri.getPort(), uri.getPath(), null).body();
  }
}
