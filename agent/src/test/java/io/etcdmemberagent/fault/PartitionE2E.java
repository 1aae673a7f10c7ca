package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.NodeNetwork;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A network partition of the local member, for real: three etcd 3.5 members in their own network
 * namespaces on a bridge (as three pods), the agent in the first one's namespace. Blackhole routes
 * inside that namespace cut it from the other two both ways while the test (on the bridge) still
 * sees everything. The majority elects or keeps a leader; the cut-off member must not be ready.
 */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#withNewest")
class PartitionE2E {

  @Parameter String version;

  private final Resources resources = new Resources();
  private final EtcdTestClient client = resources.keep(new EtcdTestClient());
  private NodeNetwork network;
  private Path dir;

  @AfterEach
  void cleanUp() throws Exception {
    resources.close();
  }

  @Test
  void aMemberCutOffFromItsPeersIsNotReadyAndComesBackAfterTheHeal() throws Exception {
    assumeTrue(NodeNetwork.available(), "network namespaces need root and iproute2");
    network = resources.keep(new NodeNetwork());
    dir = resources.tempDir("partition-");
    List<String> ips = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ips.add(network.addPod("p" + i));
    }
    String initial = "";
    for (int i = 0; i < 3; i++) {
      initial += (i == 0 ? "" : ",") + "p" + i + "=http://" + ips.get(i) + ":2380";
    }
    for (int i = 0; i < 3; i++) {
      Process etcd = startEtcd(i, ips.get(i), initial);
      resources.keep(() -> Processes.kill(etcd));
    }
    List<String> clientUrls = ips.stream().map(ip -> "http://" + ip + ":2379").toList();
    Poll.until(
        "a leader",
        Duration.ofSeconds(30),
        () -> client.status(clientUrls.get(0), 500).getLeader() != 0);
    long id = client.status(clientUrls.get(0)).getHeader().getMemberId();
    // the real API server, where the agent in p0 reaches it: on the bridge's address
    KubeControlPlane kube =
        resources.keep(KubeControlPlane.start(dir.resolve("kube"), network.gatewayIp()));

    FaultRig rig =
        resources.keep(
            new FaultRig(
                    d ->
                        new RealApiPublication(
                            kube, d, "https://" + network.gatewayIp() + ":" + kube.port()))
                .inNetwork(network.inPod("p0", List.of()), ips.get(0)));
    rig.startAgent("http://127.0.0.1:2379", clientUrls.subList(1, 3));
    rig.record(clientUrls.get(0), () -> clientUrls.subList(1, 3));
    rig.awaitReady("start");
    rig.awaitCondition("True");

    rig.mark(History.Kind.FAULT_BEGINS, "p0 cut off from p1 and p2 (blackhole routes)");
    for (String peer : ips.subList(1, 3)) {
      ip("p0", "route", "add", "blackhole", peer + "/32");
    }
    rig.awaitNotReady("partitioned");
    Poll.until(
        "the majority to have a leader without p0",
        Duration.ofSeconds(15),
        () -> client.status(clientUrls.get(1), 500).getLeader() != 0);
    Thread.sleep(3000); // how long the partition lasts, not a wait for state
    for (String peer : ips.subList(1, 3)) {
      ip("p0", "route", "del", "blackhole", peer + "/32");
    }
    rig.mark(History.Kind.FAULT_ENDS, "partition healed");
    rig.awaitReady("healed");
    rig.awaitCondition("True");

    History.Snapshot h = rig.assertInvariants(id, 5000);
    assertThat(h.truths())
        .as("the partitioned member itself lost its leader")
        .anyMatch(t -> t.answered() && !t.leaderKnown());
  }

  private Process startEtcd(int i, String ip, String initial) {
    List<String> command =
        List.of(
            EtcdBinaries.etcd(version).toString(),
            "--name",
            "p" + i,
            "--data-dir",
            dir.resolve("p" + i).toString(),
            "--listen-client-urls",
            "http://" + ip + ":2379,http://127.0.0.1:2379",
            "--advertise-client-urls",
            "http://" + ip + ":2379",
            "--listen-peer-urls",
            "http://" + ip + ":2380",
            "--initial-advertise-peer-urls",
            "http://" + ip + ":2380",
            "--initial-cluster",
            initial,
            "--initial-cluster-state",
            "new",
            "--initial-cluster-token",
            "partition",
            "--heartbeat-interval",
            "100",
            "--election-timeout",
            "1000",
            "--logger",
            "zap");
    try {
      return new ProcessBuilder(network.inPod("p" + i, command))
          .redirectErrorStream(true)
          .redirectOutput(dir.resolve("p" + i + ".log").toFile())
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void ip(String pod, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("ip"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(network.inPod(pod, command)).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0)
        .as(String.join(" ", command) + ": " + out)
        .isTrue();
  }
}
