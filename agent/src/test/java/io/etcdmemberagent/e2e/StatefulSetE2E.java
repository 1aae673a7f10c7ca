package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonObject;
import com.marcnuri.helm.Helm;
import io.etcd.jetcd.api.Member;
import io.etcdmemberagent.testing.ChartPod;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import io.etcdmemberagent.testing.Kubelet;
import io.etcdmemberagent.testing.NodeNetwork;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.ServiceProxy;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's StatefulSet on a real control plane: kube-apiserver and kube-controller-manager's
 * StatefulSet controller (built from k8s.io/kubernetes) create, order, roll and re-create the Pods
 * from the chart as applied server-side; {@link Kubelet} plays only the kubelet (bind, project the
 * ServiceAccount token, run the containers as processes in each Pod's network namespace, probe,
 * write Ready by the kubelet's rule with the readiness gate). The agents run the real jar in
 * cluster mode with the chart's ServiceAccount. Scales 1 → 3 → 5, rolls every Pod, re-creates a
 * deleted Pod.
 */
class StatefulSetE2E {

  static final String GROUP = "etcd-member-agent.io";
  static final Path MEMBER_CRD =
      Path.of("..", "deploy", "crds", "etcdmembers.etcd-member-agent.io.yaml");

  static final String NS = "db";
  static final String VERSION = EtcdBinaries.primary();

  @TempDir Path dir;
  final EtcdTestClient client = new EtcdTestClient();
  Kubelet kubelet;

  @Test
  void theStatefulSetControllerScalesRollsAndReCreatesThroughTheAgentsGate() throws Exception {
    assumeTrue(NodeNetwork.available(), "network namespaces need root and iproute2");
    try (NodeNetwork network = new NodeNetwork();
        KubeControlPlane kube = KubeControlPlane.start(dir.resolve("kube"), network.gatewayIp());
        Kubelet kubelet =
            this.kubelet =
                new Kubelet(
                    kube,
                    network,
                    NS,
                    Files.createDirectories(dir.resolve("node")),
                    EtcdBinaries.etcd(VERSION),
                    this::aStartedVoter);
        ServiceProxy service =
            new ServiceProxy(
                network.gatewayIp(),
                2379,
                () ->
                    kubelet.readyPods().stream()
                        .map(p -> new InetSocketAddress(p.ip(), 2379))
                        .toList())) {
      network.addHost("etcd-client." + NS + ".svc", network.gatewayIp());
      kube.startControllerManager();
      kube.createNamespace(NS);
      kube.kubectl("apply", "--server-side", "-f", MEMBER_CRD.toString());
      kube.kubectl(
          "wait", "--for=condition=Established", "--timeout=30s", "crd/etcdmembers." + GROUP);
      System.out.println("control plane " + kube.version() + ", etcd " + VERSION);

      long started = System.nanoTime();
      apply(kube, 1);
      awaitReadyReplicas(kube, 1, Duration.ofSeconds(120));
      scale(kube, 3);
      awaitReadyReplicas(kube, 3, Duration.ofSeconds(180));
      System.out.printf("installed and scaled 1 -> 3 in %.1f s%n", seconds(started));
      started = System.nanoTime();
      scale(kube, 5);
      awaitReadyReplicas(kube, 5, Duration.ofSeconds(180));
      System.out.printf("scaled 3 -> 5 in %.1f s%n", seconds(started));

      assertThat(voters()).hasSize(5);
      assertThat(kubelet.problems()).as("no learner Ready, no failed lifecycle").isEmpty();
      assertOrderedReady(kube, kubelet);
      Poll.until(
          "Promoted events for etcd-1..etcd-4, written by their own agents",
          Duration.ofSeconds(20),
          () -> reasons(kube).stream().filter("Promoted"::equals).count() == 4);
      Map<String, Long> ids = idsByName();
      Map<String, String> uids = uids(kube);

      assertThat(reasons(kube).stream().filter("JoinedAsLearner"::equals).count())
          .as("etcd-1..etcd-4 each joined as a learner first")
          .isEqualTo(4);
      Map<String, String> memberObjects = awaitMembersAgreeOnTheLeader(kube, 5);
      Map<String, JsonObject> members = etcdMembers(kube);
      System.out.println(kube.kubectl("get", "etcdmembers", "-o", "wide", "-n", NS));
      for (int i = 1; i < 5; i++) {
        JsonObject status = members.get("etcd-" + i).getAsJsonObject("status");
        assertThat(transitionReasons(status))
            .as("etcd-%d's own story", i)
            .containsSubsequence("JoinedAsLearner", "PromotedAsVotingMember");
        assertThat(status.getAsJsonObject("join").get("decision").getAsString())
            .as("etcd-%d's join decision", i)
            .isEqualTo("AddedAsLearner");
        assertThat(status.getAsJsonObject("join").get("memberID").getAsString())
            .isEqualTo(Long.toHexString(ids.get("etcd-" + i)));
      }
      assertThat(
              members
                  .get("etcd-0")
                  .getAsJsonObject("status")
                  .getAsJsonObject("join")
                  .get("decision")
                  .getAsString())
          .isEqualTo("BootstrappedCluster");

      started = System.nanoTime();
      Instant rollStarted = Instant.now();
      kube.kubectl("rollout", "restart", "statefulset/etcd", "-n", NS);
      Poll.until(
          "every Pod rolled and Ready",
          Duration.ofSeconds(300),
          () -> rolledOut(kube) && uids(kube).values().stream().noneMatch(uids::containsValue));
      System.out.printf("rolling restart of 5 Pods in %.1f s%n", seconds(started));
      assertThat(idsByName()).as("a restart neither adds nor removes a member").isEqualTo(ids);
      Instant rollEnded = Instant.now();
      assertThat(kubelet.fewestRunning(rollStarted, rollEnded))
          .as("one Pod down at a time: 4 of 5 members run throughout, quorum never at risk")
          .isEqualTo(4);
      // Not asserted: while the leader's Pod restarts, every follower's /readyz fails for the
      // election (no leader, as etcd's own /readyz), so a probe landing then takes it out too.
      System.out.printf(
          "during the roll: fewest members running %d, fewest Pods Ready %d%n",
          kubelet.fewestRunning(rollStarted, rollEnded),
          kubelet.fewestReady(rollStarted, rollEnded));
      assertThat(kubelet.problems()).isEmpty();
      assertThat(awaitMembersAgreeOnTheLeader(kube, 5))
          .as("the same EtcdMember objects: they outlive their Pods")
          .isEqualTo(memberObjects);
      assertThat(etcdMembers(kube).values())
          .allMatch(
              m ->
                  m.getAsJsonObject("status")
                      .getAsJsonObject("join")
                      .get("decision")
                      .getAsString()
                      .equals("RestartedFromData"));

      started = System.nanoTime();
      String before = uids(kube).get("etcd-2");
      kube.kubectl("delete", "pod", "etcd-2", "-n", NS, "--wait=false");
      Poll.until(
          "etcd-2 re-created by the controller and Ready",
          Duration.ofSeconds(120),
          () -> {
            String now = uids(kube).get("etcd-2");
            return now != null && !now.equals(before) && podReady(kube, "etcd-2");
          });
      String after = uids(kube).get("etcd-2");
      JsonObject pod = kube.admin().getJson("/api/v1/namespaces/" + NS + "/pods/etcd-2");
      assertThat(
              KubePods.field(
                  pod.getAsJsonObject("status").getAsJsonArray("conditions"), "ready", "status"))
          .as("the agent's condition on the new Pod")
          .isEqualTo("True");
      ChartPod etcd2 = kubelet.pod("etcd-2");
      assertThat(Http.get(etcd2.ip(), etcd2.agent().port(), "/status", null).body())
          .as("the agent of the new Pod writes to it")
          .contains(after);
      assertThat(idsByName()).isEqualTo(ids);
      assertThat(awaitMembersAgreeOnTheLeader(kube, 5)).isEqualTo(memberObjects);
      System.out.printf("deleted Pod re-created and Ready in %.1f s%n", seconds(started));
      assertThat(kubelet.problems()).isEmpty();
    } finally {
      client.close();
    }
  }

  /** The EtcdMember objects by name. */
  private static Map<String, JsonObject> etcdMembers(KubeControlPlane kube) {
    Map<String, JsonObject> byName = new java.util.TreeMap<>();
    for (var item :
        kube.admin()
            .getJson("/apis/" + GROUP + "/v1alpha1/namespaces/" + NS + "/etcdmembers")
            .getAsJsonArray("items")) {
      JsonObject o = item.getAsJsonObject();
      byName.put(o.getAsJsonObject("metadata").get("name").getAsString(), o);
    }
    return byName;
  }

  private static List<String> transitionReasons(JsonObject status) {
    List<String> out = new java.util.ArrayList<>();
    for (var t : status.getAsJsonArray("transitions")) {
      out.add(t.getAsJsonObject().get("reason").getAsString());
    }
    return out;
  }

  /**
   * Waits until there are {@code n} EtcdMembers, all ready, exactly one a Leader, and every
   * object's leaderID is that leader's memberID; returns their UIDs by name.
   */
  private static Map<String, String> awaitMembersAgreeOnTheLeader(KubeControlPlane kube, int n) {
    Poll.until(
        n + " EtcdMembers agreeing on one leader",
        Duration.ofSeconds(60),
        () -> {
          Map<String, JsonObject> members = etcdMembers(kube);
          java.util.Set<String> leaders = new java.util.TreeSet<>();
          java.util.Set<String> named = new java.util.TreeSet<>();
          for (JsonObject m : members.values()) {
            JsonObject s = m.getAsJsonObject("status");
            if (s == null || !s.has("ready") || !s.get("ready").getAsBoolean()) {
              return false;
            }
            if (s.get("role").getAsString().equals("Leader")) {
              leaders.add(s.get("memberID").getAsString());
            }
            named.add(s.has("leaderID") ? s.get("leaderID").getAsString() : "");
          }
          return members.size() == n && leaders.size() == 1 && named.equals(leaders);
        });
    Map<String, String> uids = new java.util.TreeMap<>();
    etcdMembers(kube)
        .forEach(
            (name, o) -> uids.put(name, o.getAsJsonObject("metadata").get("uid").getAsString()));
    return uids;
  }

  /** The invariant checked before every Ready=True: the Pod's member is a started voter. */
  private boolean aStartedVoter(String name, ChartPod pod) {
    try {
      return client.members("http://" + pod.ip() + ":2379").stream()
          .anyMatch(m -> m.getName().equals(name) && !m.getIsLearner());
    } catch (RuntimeException e) {
      return false;
    }
  }

  private void apply(KubeControlPlane kube, int replicas) throws Exception {
    String manifest =
        new Helm(KubePods.CHART)
            .template()
            .withName("etcd")
            .withNamespace(NS)
            .withKubeVersion(kube.version().substring(1))
            .set("replicas", replicas)
            .set("agent.bootstrapWait", "2s")
            .set("agent.replaceLostMember", true)
            .set("agent.pollInterval", "500ms")
            .set("agent.logFormat", "text")
            .call();
    Path file = dir.resolve("chart.yaml");
    Files.writeString(file, manifest);
    kube.kubectl("apply", "--server-side", "-n", NS, "-f", file.toString());
  }

  private static void scale(KubeControlPlane kube, int replicas) {
    kube.kubectl("scale", "statefulset/etcd", "-n", NS, "--replicas=" + replicas);
  }

  private static JsonObject statefulSetStatus(KubeControlPlane kube) {
    return kube.admin()
        .getJson("/apis/apps/v1/namespaces/" + NS + "/statefulsets/etcd")
        .getAsJsonObject("status");
  }

  private static int readyReplicas(KubeControlPlane kube) {
    JsonObject s = statefulSetStatus(kube);
    return s.has("readyReplicas") ? s.get("readyReplicas").getAsInt() : 0;
  }

  /** The Pod's own Ready condition (written by the kubelet, so the gate held). */
  private static boolean podReady(KubeControlPlane kube, String name) {
    JsonObject status =
        kube.admin()
            .getJson("/api/v1/namespaces/" + NS + "/pods/" + name)
            .getAsJsonObject("status");
    JsonObject ready =
        status.has("conditions")
            ? KubePods.condition(status.getAsJsonArray("conditions"), "Ready")
            : null;
    return ready != null && ready.get("status").getAsString().equals("True");
  }

  private static boolean rolledOut(KubeControlPlane kube) {
    JsonObject s = statefulSetStatus(kube);
    return readyReplicas(kube) == 5
        && s.has("updatedReplicas")
        && s.get("updatedReplicas").getAsInt() == 5
        && s.get("currentRevision").getAsString().equals(s.get("updateRevision").getAsString());
  }

  private static void awaitReadyReplicas(KubeControlPlane kube, int n, Duration limit) {
    Poll.until(n + " ready replicas", limit, () -> readyReplicas(kube) == n);
  }

  /**
   * OrderedReady: the controller created each Pod only after the one before was Ready, which took
   * the agent's condition (the readiness gate).
   */
  private static void assertOrderedReady(KubeControlPlane kube, Kubelet kubelet) {
    Map<String, Instant> created = new HashMap<>();
    for (var e :
        kube.admin().getJson("/api/v1/namespaces/" + NS + "/pods").getAsJsonArray("items")) {
      JsonObject meta = e.getAsJsonObject().getAsJsonObject("metadata");
      created.put(
          meta.get("name").getAsString(),
          Instant.parse(meta.get("creationTimestamp").getAsString()));
    }
    for (int i = 1; i < 5; i++) {
      String previous = "etcd-" + (i - 1);
      Instant firstReady =
          kubelet.readyChanges().stream()
              .filter(c -> c.pod().equals(previous) && c.ready())
              .map(Kubelet.ReadyChange::at)
              .findFirst()
              .orElseThrow();
      // creationTimestamp has whole seconds
      assertThat(created.get("etcd-" + i))
          .as("etcd-%d created after %s was Ready", i, previous)
          .isAfterOrEqualTo(firstReady.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
    }
  }

  private static List<String> reasons(KubeControlPlane kube) {
    return new KubePods(kube, NS, "etcd").eventReasons();
  }

  private static Map<String, String> uids(KubeControlPlane kube) {
    Map<String, String> out = new HashMap<>();
    for (var e :
        kube.admin().getJson("/api/v1/namespaces/" + NS + "/pods").getAsJsonArray("items")) {
      JsonObject meta = e.getAsJsonObject().getAsJsonObject("metadata");
      out.put(meta.get("name").getAsString(), meta.get("uid").getAsString());
    }
    return out;
  }

  private List<Member> members() {
    for (ChartPod p : kubelet.readyPods()) {
      try {
        return client.members("http://" + p.ip() + ":2379");
      } catch (RuntimeException e) {
        // try the next member
      }
    }
    throw new AssertionError("no ready member answered MemberList");
  }

  private List<Member> voters() {
    return members().stream().filter(m -> !m.getIsLearner()).toList();
  }

  private Map<String, Long> idsByName() {
    return members().stream().collect(Collectors.toMap(Member::getName, Member::getID));
  }

  private static double seconds(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1e9;
  }
}
