package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonElement;
import com.marcnuri.helm.Helm;
import io.etcd.jetcd.api.Member;
import io.etcdmemberagent.kube.FakeKubeApi;
import io.etcdmemberagent.testing.ChartPod;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.NodeNetwork;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.ServiceProxy;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Probe;
import io.kubernetes.client.openapi.models.V1StatefulSet;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The chart's StatefulSet played on one machine: each pod in its own network namespace with the
 * chart's fixed ports and DNS names, its containers run as processes with exactly the rendered
 * environment, commands and probes (the real jar as {@code join} and {@code run}, real etcd 3.5
 * from the config file join writes), the client Service as a proxy to Ready pods only, Pods and
 * their conditions at the API stand-in, and a controller that creates pods in order and waits for
 * each to be Ready (readiness probes and the readiness gate). Scales 1 → 3, rolls every pod, and
 * replaces a member whose volume is lost.
 */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#versions")
class StatefulSetE2E {

  @Parameter String version;

  static final String NS = "db";
  static final Path CHART = Path.of("..", "charts", "etcd-member-agent");
  static final String GATE = "etcd-member-agent.io/ready";

  @TempDir Path dir;
  FakeKubeApi api;
  final List<ChartPod> pods = new ArrayList<>();
  V1PodSpec spec;
  String configMap;
  final EtcdTestClient client = new EtcdTestClient();

  @Test
  void scalesOneToThreeRollsEveryPodAndReplacesALostVolume() throws IOException {
    assumeTrue(NodeNetwork.available(), "network namespaces need root and iproute2");
    render();
    try (NodeNetwork network = new NodeNetwork()) {
      api = new FakeKubeApi(network.gatewayIp());
      network.addHost("etcd-client." + NS + ".svc", network.gatewayIp());
      try (ServiceProxy service =
          new ServiceProxy(network.gatewayIp(), 2379, this::readyClientEndpoints)) {
        long started = System.nanoTime();
        for (int i = 0; i < 3; i++) {
          ChartPod pod = new ChartPod("etcd-" + i, NS, network, dir, EtcdBinaries.etcd(version));
          network.addHost("etcd-" + i + ".etcd-peer." + NS + ".svc", pod.ip());
          pods.add(pod);
          startAndAwaitReady(pod);
          assertThat(voters()).hasSize(i + 1);
        }
        System.out.printf("scaled 1 -> 3 in %.1f s%n", seconds(started));
        assertThat(api.events().stream().filter(e -> reason(e).equals("Promoted")).count())
            .as("etcd-1 and etcd-2 promoted by their own agents")
            .isEqualTo(2);
        Map<String, Long> ids = idsByName();

        started = System.nanoTime();
        for (int i = 2; i >= 0; i--) {
          ChartPod pod = pods.get(i);
          pod.stop();
          startAndAwaitReady(pod);
          assertThat(idsByName()).as("a restart neither adds nor removes").isEqualTo(ids);
        }
        System.out.printf("rolling restart of 3 pods in %.1f s%n", seconds(started));

        started = System.nanoTime();
        ChartPod lost = pods.get(1);
        lost.stop();
        lost.loseVolume();
        startAndAwaitReady(lost);
        Map<String, Long> after = idsByName();
        assertThat(after.keySet()).containsExactlyInAnyOrder("etcd-0", "etcd-1", "etcd-2");
        assertThat(after.get("etcd-1"))
            .as("re-added under a new id")
            .isNotEqualTo(ids.get("etcd-1"));
        assertThat(after.get("etcd-0")).isEqualTo(ids.get("etcd-0"));
        assertThat(after.get("etcd-2")).isEqualTo(ids.get("etcd-2"));
        assertThat(voters()).hasSize(3);
        System.out.printf("lost volume replaced in %.1f s%n", seconds(started));
      } finally {
        pods.forEach(ChartPod::close);
        api.close();
      }
    } finally {
      client.close();
    }
  }

  private void render() throws IOException {
    String manifest =
        new Helm(CHART)
            .template()
            .withName("etcd")
            .withNamespace(NS)
            .withKubeVersion("1.31.0")
            .set("agent.bootstrapWait", "2s")
            .set("agent.replaceLostMember", true)
            .set("agent.pollInterval", "500ms")
            .set("agent.logFormat", "text")
            .call();
    for (String doc : manifest.split("(?m)^---\\s*$")) {
      if (doc.contains("kind: StatefulSet")) {
        spec = ((V1StatefulSet) Yaml.load(doc)).getSpec().getTemplate().getSpec();
      } else if (doc.contains("kind: ConfigMap")) {
        configMap = ((V1ConfigMap) Yaml.load(doc)).getData().get("etcd.conf.yml");
      }
    }
  }

  private static V1Container container(List<V1Container> list, String name) {
    return list.stream().filter(c -> c.getName().equals(name)).findFirst().orElseThrow();
  }

  /** What the StatefulSet controller and the kubelet do for one pod, until it is Ready. */
  private void startAndAwaitReady(ChartPod pod) {
    String uid = api.createPod(NS, pod.name());
    int exit = pod.join(container(spec.getInitContainers(), "join"), configMap, uid, Map.of());
    assertThat(exit).as("join of %s: %s", pod.name(), pod.lastJoinOutput()).isZero();
    pod.startEtcd(container(spec.getContainers(), "etcd"));
    pod.startAgent(
        container(spec.getContainers(), "agent"),
        uid,
        Map.of("KUBECONFIG", api.writeKubeconfig(dir).toString()));
    Poll.until(pod.name() + " Ready", Duration.ofSeconds(90), () -> podReady(pod));
  }

  /**
   * The kubelet's view: every container's readiness probe passes and the readiness gate is True.
   */
  private boolean podReady(ChartPod pod) {
    for (V1Container c : spec.getContainers()) {
      if (!probePasses(c.getReadinessProbe(), pod)) {
        return false;
      }
    }
    String gate = spec.getReadinessGates().get(0).getConditionType();
    for (JsonElement e : api.conditions(NS, pod.name())) {
      var c = e.getAsJsonObject();
      if (c.get("type").getAsString().equals(gate)) {
        return c.get("status").getAsString().equals("True");
      }
    }
    return false;
  }

  private boolean probePasses(V1Probe probe, ChartPod pod) {
    var get = probe.getHttpGet();
    int port =
        get.getPort().isInteger()
            ? get.getPort().getIntValue()
            : spec.getContainers().stream()
                .flatMap(c -> c.getPorts().stream())
                .filter(p -> get.getPort().getStrValue().equals(p.getName()))
                .findFirst()
                .orElseThrow()
                .getContainerPort();
    int status = Http.statusOrMinusOne(pod.ip(), port, get.getPath());
    return status >= 200 && status < 400;
  }

  private List<InetSocketAddress> readyClientEndpoints() {
    return pods.stream()
        .filter(this::podReady)
        .map(p -> new InetSocketAddress(p.ip(), 2379))
        .toList();
  }

  private List<Member> members() {
    for (ChartPod p : pods) {
      try {
        return client.members("http://" + p.ip() + ":2379");
      } catch (RuntimeException e) {
        // try the next member
      }
    }
    throw new AssertionError("no member answered MemberList");
  }

  private List<Member> voters() {
    return members().stream().filter(m -> !m.getIsLearner()).toList();
  }

  private Map<String, Long> idsByName() {
    return members().stream().collect(Collectors.toMap(Member::getName, Member::getID));
  }

  private static String reason(com.google.gson.JsonObject event) {
    return event.get("reason").getAsString();
  }

  private static double seconds(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1e9;
  }
}
