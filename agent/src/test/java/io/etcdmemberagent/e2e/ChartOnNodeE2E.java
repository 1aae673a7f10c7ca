package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart as a user installs it, on a real node ({@link KubeNode}: the real kubelet and
 * containerd run the agent's own image): {@code helm install} under a release name of the user's
 * choosing with only the images and the storage class set, into a namespace that enforces the
 * "restricted" Pod Security Standard. Three members come up Ready through the kubelet's probes and
 * the readiness gate; then 3 → 4 with {@code kubectl scale} and 4 → 5 with {@code helm upgrade},
 * while the client Service's EndpointSlice is sampled: a learner is never a ready endpoint. The
 * containers run as the runtime applied them (UID, read-only root, no capabilities), and the
 * agent's JVM maps its image's ahead-of-time cache within the chart's memory limit. The default
 * NetworkPolicy is enforced on the node, and admits and refuses what it says ({@link
 * ChartNetworkPolicy}).
 */
class ChartOnNodeE2E {

  static final String NS = "orders";

  @Test
  void aUserInstallsTheChartAndScalesItThroughLearners() throws Exception {
    assumeTrue(KubeNode.available(), "the node needs root");
    KubeNode node = KubeNode.shared();
    // Named like the agent's environment prefix: its Services would inject ETCD_MEMBER_AGENT_*
    // service links into every Pod of the namespace that does not set enableServiceLinks: false.
    ChartRelease db = ChartRelease.withChartDefaults(node, "etcd-member-agent", NS);
    try {
      db.createRestrictedNamespace();
      long started = System.nanoTime();
      db.install();
      db.useApplicationsCertificate(dir);
      db.awaitReadyVoters(3, Duration.ofMinutes(5));
      System.out.printf("[node] helm install to 3 Ready members in %.1f s%n", seconds(started));
      assertTheDefaultTrafficIsEncryptedAndAuthenticated(db, node);

      assertEveryPodReadyByTheKubeletAndTheGate(db, 3);
      assertThat(db.etcdMembers())
          .as("each member's own agent wrote its EtcdMember")
          .containsOnlyKeys(db.pod(0), db.pod(1), db.pod(2));
      assertThat(
              node.getJson("service", db.name() + "-peer", "-n", NS)
                  .getAsJsonObject("spec")
                  .get("publishNotReadyAddresses")
                  .getAsBoolean())
          .as("a learner needs its peer DNS name before it is ready")
          .isTrue();
      assertThat(db.readyEndpoints()).isEqualTo(Set.copyOf(db.podIps().values()));
      ChartAlerts.assertNoAlertOnTheSettledInstall(db, node, dir, "the default install (TLS)");
      assertTheContainersRunHardened(node);
      assertTheAgentUsesItsAotCacheWithinItsMemoryLimit(node);

      // 3 -> 4 by kubectl, 4 -> 5 by helm; the EndpointSlice never lists a learner as ready
      AtomicBoolean sampling = new AtomicBoolean(true);
      List<String> violations = new ArrayList<>();
      AtomicInteger samples = new AtomicInteger();
      AtomicInteger learnersSeen = new AtomicInteger();
      AtomicInteger mostLearners = new AtomicInteger();
      Thread sampler =
          new Thread(
              () -> {
                while (sampling.get()) {
                  sampleLearnersAgainstEndpoints(
                      db, violations, samples, learnersSeen, mostLearners);
                }
              },
              "endpoint-sampler");
      sampler.start();
      started = System.nanoTime();
      node.kubectl("scale", "statefulset/" + db.name(), "-n", NS, "--replicas=4");
      db.awaitReadyVoters(4, Duration.ofMinutes(4));
      // Helm 4 applies server-side: after kubectl scale, .spec.replicas belongs to kubectl, and
      // an upgrade that sets it is refused until the user forces it (the chart README says so)
      var refused = node.tool("helm", 600, db.helmArgs("upgrade", "replicas=5"));
      assertThat(refused.exitCode()).isNotZero();
      assertThat(refused.output()).contains("conflict", ".spec.replicas");
      List<String> forced = new ArrayList<>(List.of(db.helmArgs("upgrade", "replicas=5")));
      forced.add("--force-conflicts");
      node.helm(forced.toArray(String[]::new));
      db.awaitReadyVoters(5, Duration.ofMinutes(4));
      sampling.set(false);
      sampler.join(30_000);
      System.out.printf(
          "[node] 3 -> 5 in %.1f s; %d samples, %d with a learner%n",
          seconds(started), samples.get(), learnersSeen.get());
      assertThat(violations).as("a learner listed as a ready endpoint").isEmpty();
      assertThat(learnersSeen.get()).as("the sampler saw the learners").isPositive();
      assertThat(db.readyEndpoints()).hasSize(5);
      assertEveryPodReadyByTheKubeletAndTheGate(db, 5);
      assertThat(db.eventReasons())
          .as("the new members' own agents promoted them")
          .filteredOn("Promoted"::equals)
          .hasSizeGreaterThanOrEqualTo(2);
      assertThat(mostLearners.get())
          .as("the two new members joined one at a time (etcd's learner slot; join waits for it)")
          .isEqualTo(1);
      assertThat(
              db.etcdMembers()
                  .get(db.pod(0))
                  .getAsJsonObject("status")
                  .getAsJsonObject("join")
                  .get("decision")
                  .getAsString())
          .isEqualTo("BootstrappedCluster");
      assertThat(
              db.etcdMembers().values().stream()
                  .map(m -> m.getAsJsonObject("status").get("role").getAsString())
                  .filter("Leader"::equals)
                  .count())
          .as("one leader among the EtcdMembers")
          .isEqualTo(1);
      for (int i = 3; i < 5; i++) {
        JsonObject status = db.etcdMembers().get(db.pod(i)).getAsJsonObject("status");
        assertThat(status.getAsJsonObject("join").get("decision").getAsString())
            .as("%s's join decision", db.pod(i))
            .isEqualTo("AddedAsLearner");
        List<String> story = new ArrayList<>();
        status
            .getAsJsonArray("transitions")
            .forEach(t -> story.add(t.getAsJsonObject().get("reason").getAsString()));
        assertThat(story)
            .as("%s's own story", db.pod(i))
            .containsSubsequence("JoinedAsLearner", "PromotedAsVotingMember");
      }
      ChartNetworkPolicy.assertEnforcedOnTheDefaultInstall(db, node, dir);
      started = System.nanoTime();
      db.uninstall();
      // Helm deletes the StatefulSet, then the agent's ServiceAccount and Role, while the garbage
      // collector stops the Pods: each agent finds "not surplus" (404, 401 or 403) and lets its
      // etcd go, instead of retrying the whole 45 s scale-down budget
      Poll.until(
          "the Pods gone after helm uninstall", Duration.ofSeconds(40), () -> db.pods().isEmpty());
      System.out.printf("[node] helm uninstall to no Pod in %.1f s%n", seconds(started));
    } finally {
      db.client().close();
    }
  }

  /**
   * The default install: etcd's peer and client ports speak TLS with client certificates from the
   * CA join created once in the Secret etcd-member-agent-ca (one CA for all members, never in a
   * render), an application reads etcd with the certificate of etcd-member-agent-client-tls, and a
   * client without a certificate is refused.
   */
  private void assertTheDefaultTrafficIsEncryptedAndAuthenticated(ChartRelease db, KubeNode node)
      throws Exception {
    List<io.etcd.jetcd.api.Member> members = db.members();
    assertThat(members).hasSize(3);
    for (var m : members) {
      assertThat(m.getPeerURLsList())
          .as("%s's peer URLs", m.getName())
          .allMatch(u -> u.startsWith("https://"));
      assertThat(m.getClientURLsList()).allMatch(u -> u.startsWith("https://"));
    }
    String ip = db.podIps().get(db.pod(0));
    try (EtcdTestClient plain = new EtcdTestClient()) {
      assertThatThrownBy(() -> plain.status("http://" + ip + ":2379", 2000))
          .as("plain http to the client port");
    }
    Path ca = dir.resolve(db.name() + "-app-ca.crt");
    try (EtcdTestClient noCertificate = EtcdTestClient.withTrustOnly(ca, "localhost")) {
      assertThatThrownBy(() -> noCertificate.status("https://" + ip + ":2379", 2000))
          .as("TLS without a client certificate");
    }
    String caSecret =
        node.kubectl(
            "get", "secret", db.name() + "-ca", "-n", NS, "-o", "jsonpath={.metadata.labels}");
    assertThat(caSecret)
        .as("made by join, not by helm")
        .contains("etcd-member-agent")
        .doesNotContain("Helm");
    for (JsonObject pod : db.pods()) {
      assertThat(ChartRelease.condition(pod, ChartRelease.PREFIX + "peer-tls"))
          .as("%s's peer TLS", pod.getAsJsonObject("metadata").get("name").getAsString())
          .isEqualTo("True");
    }
  }

  /**
   * One sample: the learners' Pod IPs by the member list, read before and after the EndpointSlice;
   * a member that was a learner at both reads was one while the slice was read.
   */
  private static void sampleLearnersAgainstEndpoints(
      ChartRelease db,
      List<String> violations,
      AtomicInteger samples,
      AtomicInteger learnersSeen,
      AtomicInteger mostLearners) {
    try {
      Set<String> before = db.learnerIps();
      Set<String> ready = db.readyEndpoints();
      Set<String> after = db.learnerIps();
      samples.incrementAndGet();
      if (!before.isEmpty()) {
        learnersSeen.incrementAndGet();
      }
      mostLearners.accumulateAndGet(before.size(), Math::max);
      for (String ip : before) {
        if (after.contains(ip) && ready.contains(ip)) {
          violations.add("learner " + ip + " ready in the EndpointSlice: " + ready);
        }
      }
    } catch (RuntimeException e) {
      // the API server or every member busy: the next sample
    }
  }

  /** Ready written by the kubelet, the gate written by the agent, every container ready. */
  private static void assertEveryPodReadyByTheKubeletAndTheGate(ChartRelease db, int n) {
    List<JsonObject> pods = db.pods();
    assertThat(pods).hasSize(n);
    for (JsonObject pod : pods) {
      String name = pod.getAsJsonObject("metadata").get("name").getAsString();
      assertThat(ChartRelease.condition(pod, "Ready")).as("%s Ready", name).isEqualTo("True");
      assertThat(ChartRelease.condition(pod, ChartRelease.PREFIX + "ready"))
          .as("%s's gate", name)
          .isEqualTo("True");
      assertThat(ChartRelease.condition(pod, ChartRelease.PREFIX + "voting-member"))
          .as("%s a voter", name)
          .isEqualTo("True");
      for (JsonElement cs : pod.getAsJsonObject("status").getAsJsonArray("containerStatuses")) {
        assertThat(cs.getAsJsonObject().get("ready").getAsBoolean())
            .as("%s's %s ready by its probe", name, cs.getAsJsonObject().get("name"))
            .isTrue();
      }
    }
  }

  /** What the runtime really applied: the UID, a read-only root, no capabilities. */
  private static void assertTheContainersRunHardened(KubeNode node) {
    for (String container : List.of("etcd", "agent")) {
      for (String id :
          node.crictl("ps", "-q", "--name", "^" + container + "$", "--namespace", NS)
              .strip()
              .split("\\s+")) {
        JsonObject info = node.inspect(id);
        JsonObject spec = info.getAsJsonObject("runtimeSpec");
        assertThat(spec.getAsJsonObject("process").getAsJsonObject("user").get("uid").getAsInt())
            .as("%s runs as 65532", container)
            .isEqualTo(65532);
        assertThat(spec.getAsJsonObject("root").get("readonly").getAsBoolean())
            .as("%s's root filesystem is read-only", container)
            .isTrue();
        JsonObject caps = spec.getAsJsonObject("process").getAsJsonObject("capabilities");
        assertThat(
                caps == null
                    || !caps.has("effective")
                    || caps.getAsJsonArray("effective").isEmpty())
            .as("%s has no capabilities", container)
            .isTrue();
        int pid = info.get("pid").getAsInt();
        assertThat(statusLine(pid, "Uid:")).as("%s's process UIDs", container).startsWith("65532");
      }
    }
  }

  /**
   * The JVM mapped the image's ahead-of-time cache (a cache it could not use is reported and left
   * unmapped), and the working set the kubelet counts stays inside the chart's limit.
   */
  private static void assertTheAgentUsesItsAotCacheWithinItsMemoryLimit(KubeNode node)
      throws Exception {
    for (String id :
        node.crictl("ps", "-q", "--name", "^agent$", "--namespace", NS).strip().split("\\s+")) {
      int pid = node.inspect(id).get("pid").getAsInt();
      assertThat(Files.readString(Path.of("/proc", Integer.toString(pid), "maps")))
          .as("the agent's JVM maps /app/etcd-member-agent.aot")
          .contains("/app/etcd-member-agent.aot");
    }
    long limit = 256L * 1024 * 1024;
    Map<String, Long> workingSets = node.workingSets(NS, "agent");
    workingSets.forEach(
        (pod, bytes) -> {
          System.out.printf(
              "[node] %s agent working set %.1f MiB (limit 256 MiB)%n", pod, bytes / 1048576.0);
          assertThat(bytes).as(pod).isPositive().isLessThan(limit);
        });
    assertThat(workingSets).hasSize(3);
  }

  /** What the runtime says of a container ({@code crictl inspect}): its spec, its process. */
  private static String statusLine(int pid, String key) {
    try {
      return Files.readAllLines(Path.of("/proc", Integer.toString(pid), "status")).stream()
          .filter(l -> l.startsWith(key))
          .map(l -> l.substring(key.length()).strip())
          .findFirst()
          .orElseThrow();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static double seconds(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1e9;
  }

  @TempDir Path dir;
}
