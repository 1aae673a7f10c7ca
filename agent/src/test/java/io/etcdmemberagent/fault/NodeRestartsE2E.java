package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonObject;
import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Poll;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * Restarts on the real node, recorded like the fault suite: the agent of every member is sampled
 * ({@code /readyz}, the Pod's published ready condition from the API server, the member's own
 * truth) through a rolling restart, a deleted Pod (re-created with a new UID and address) and an
 * etcd container stopped with {@code crictl} (the kubelet restarts it). Afterwards: the invariants
 * hold for every member, no member was added or removed, the EtcdMember objects outlived their
 * Pods, and the data written before is read after. Then {@code helm uninstall} keeps the volumes
 * and a reinstall comes back on the same members and data.
 */
class NodeRestartsE2E {

  static final String NS = "inventory";

  /** The chart's poll (1 s) and etcd timeout (2 s), plus the sampling period. */
  static final Duration DETECTION = Duration.ofMillis(3400);

  /** A Pod restarted: a new sandbox, join, etcd catching up, the agent's first verdicts. */
  static final Duration CONVERGENCE = Duration.ofSeconds(60);

  /** The condition through the real API server: the agent's patch rate limit and back-off. */
  static final Duration PUBLICATION = Duration.ofSeconds(5);

  /** Set once the release's applications' certificate exists: the chart's default TLS. */
  EtcdTestClient client;

  @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir;

  final Map<String, String> addresses = new ConcurrentHashMap<>();

  @Test
  void restartsKeepTheMembersTheirDataAndTheInvariants() throws Exception {
    assumeTrue(KubeNode.available(), "the node needs root");
    KubeNode node = KubeNode.shared();
    ChartRelease db = ChartRelease.withChartDefaults(node, "inventory", NS);
    List<Recorder> recorders = new ArrayList<>();
    java.util.concurrent.ScheduledExecutorService refresher = null;
    try {
      db.createRestrictedNamespace();
      db.install(ChartRelease.QUICK_BOOTSTRAP);
      db.useApplicationsCertificate(dir);
      client = db.client();
      db.awaitReadyVoters(3, Duration.ofMinutes(5));
      Map<String, Long> ids = db.memberIds();
      Map<String, String> memberObjects = uids(db.etcdMembers());
      String anyVoter = db.clientUrl(db.podIps().values().iterator().next());
      for (int i = 0; i < 100; i++) {
        client.put(anyVoter, "inventory/" + i, ("item " + i).getBytes(StandardCharsets.UTF_8));
      }

      addresses.putAll(db.podIps());
      refresher = refreshAddresses(db);
      for (int i = 0; i < 3; i++) {
        String pod = db.pod(i);
        recorders.add(
            new Recorder(
                () -> addresses.get(pod),
                ChartRelease.AGENT_PORT,
                true,
                () ->
                    java.util.Objects.requireNonNullElse(
                        ChartRelease.condition(db.pod(pod), Recorder.READY_CONDITION), ""),
                () -> addresses.containsKey(pod) ? db.clientUrl(addresses.get(pod)) : null,
                () -> others(db, pod),
                applicationsClient(db)));
      }

      Map<String, String> before = db.podUids();
      long started = System.nanoTime();
      mark(recorders, History.Kind.FAULT_BEGINS, "agent: rollout restart");
      node.kubectl("rollout", "restart", "statefulset/" + db.name(), "-n", NS);
      Poll.until(
          "every Pod rolled and Ready",
          Duration.ofMinutes(6),
          () -> {
            Map<String, String> now = db.podUids();
            return now.size() == 3
                && now.values().stream().noneMatch(before::containsValue)
                && db.readyPods().size() == 3;
          });
      mark(recorders, History.Kind.FAULT_ENDS, "agent: rollout restart");
      System.out.printf("[node] rolling restart of 3 Pods in %.1f s%n", seconds(started));
      assertThat(db.memberIds()).as("a restart neither adds nor removes a member").isEqualTo(ids);
      for (JsonObject m : db.etcdMembers().values()) {
        assertThat(
                m.getAsJsonObject("status").getAsJsonObject("join").get("decision").getAsString())
            .isEqualTo("RestartedFromData");
      }

      String deleted = db.pod(1);
      String oldUid = db.podUids().get(deleted);
      started = System.nanoTime();
      mark(recorders, History.Kind.FAULT_BEGINS, "agent: delete " + deleted);
      node.kubectl("delete", "pod", deleted, "-n", NS, "--wait=false");
      Poll.until(
          deleted + " re-created by the controller and Ready",
          Duration.ofMinutes(3),
          () -> {
            String uid = db.podUids().get(deleted);
            return uid != null && !uid.equals(oldUid) && db.readyPods().contains(deleted);
          });
      mark(recorders, History.Kind.FAULT_ENDS, "agent: delete " + deleted);
      System.out.printf("[node] deleted Pod re-created and Ready in %.1f s%n", seconds(started));
      String newUid = db.podUids().get(deleted);
      Poll.until(
          "the new Pod's agent knows its Pod",
          Duration.ofSeconds(30),
          () -> db.agentGet(db.podIps().get(deleted), "/status").body().contains(newUid));

      String stopped = db.pod(2);
      int restarts = restartCount(db.pod(stopped), "etcd");
      started = System.nanoTime();
      mark(recorders, History.Kind.FAULT_BEGINS, "agent: crictl stop etcd of " + stopped);
      String container =
          node.crictl("ps", "-q", "--name", "^etcd$", "--pod", podId(node, stopped)).strip();
      node.crictl("stop", container);
      Poll.until(
          "the kubelet restarted " + stopped + "'s etcd and the Pod is Ready",
          Duration.ofMinutes(3),
          () -> restartCount(db.pod(stopped), "etcd") > restarts && db.readyPods().size() == 3);
      mark(recorders, History.Kind.FAULT_ENDS, "agent: crictl stop etcd of " + stopped);
      System.out.printf(
          "[node] stopped etcd container back and Ready in %.1f s%n", seconds(started));

      assertThat(db.memberIds()).isEqualTo(ids);
      assertThat(uids(db.etcdMembers()))
          .as("the same EtcdMember objects: they outlive their Pods")
          .isEqualTo(memberObjects);
      Invariants invariants = new Invariants(DETECTION, CONVERGENCE, PUBLICATION);
      List<String> violations = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        History.Snapshot h = recorders.get(i).closeAfterLastMark(CONVERGENCE, 0, true);
        String pod = db.pod(i);
        Invariants.convergenceTimes(h).forEach(t -> System.out.println("[node] " + pod + " " + t));
        violations.addAll(prefixed(db.pod(i), invariants.readyOnlyForAHealthyVoter(h)));
        violations.addAll(prefixed(db.pod(i), invariants.readyAgainAfterEveryFault(h)));
        violations.addAll(prefixed(db.pod(i), invariants.conditionFollowsReadiness(h)));
        assertThat(h.verdicts()).hasSizeGreaterThan(100);
      }
      assertThat(violations).as("invariant violations on the node").isEmpty();
      assertThat(readAll(db)).as("the data written before the restarts").isEqualTo(100);

      // uninstall keeps the volumes; a reinstall comes back on them
      db.uninstall();
      assertThat(
              node.getJson("pvc", "-n", NS).getAsJsonArray("items").asList().stream()
                  .map(
                      e ->
                          e.getAsJsonObject().getAsJsonObject("metadata").get("name").getAsString())
                  .toList())
          .as("helm uninstall keeps the StatefulSet's volumes")
          .containsExactlyInAnyOrder("data-" + db.pod(0), "data-" + db.pod(1), "data-" + db.pod(2));
      started = System.nanoTime();
      db.install();
      db.awaitReadyVoters(3, Duration.ofMinutes(5));
      System.out.printf("[node] reinstalled on the kept volumes in %.1f s%n", seconds(started));
      // join made the CA, not Helm: it outlives the release, and the applications' certificate
      // from before the uninstall still reads the reinstalled members
      assertThat(db.memberIds()).as("the same members, from their data").isEqualTo(ids);
      assertThat(readAll(db)).isEqualTo(100);
      db.uninstall();
    } finally {
      recorders.forEach(Recorder::close);
      if (refresher != null) {
        refresher.shutdownNow();
      }
      db.client().close();
    }
  }

  /**
   * Keeps {@link #addresses} current (a re-created Pod has a new address), read every 250 ms until
   * the returned scheduler is shut down.
   */
  private java.util.concurrent.ScheduledExecutorService refreshAddresses(ChartRelease db) {
    var scheduler =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "pod-addresses");
              t.setDaemon(true);
              return t;
            });
    scheduler.scheduleWithFixedDelay(
        () -> {
          try {
            Map<String, String> now = db.podIps();
            addresses.keySet().retainAll(now.keySet());
            addresses.putAll(now);
          } catch (RuntimeException e) {
            // the API server busy: the next round
          }
        },
        0,
        250,
        java.util.concurrent.TimeUnit.MILLISECONDS);
    return scheduler;
  }

  private List<String> others(ChartRelease db, String pod) {
    List<String> out = new ArrayList<>();
    addresses.forEach(
        (name, ip) -> {
          if (!name.equals(pod)) {
            out.add(db.clientUrl(ip));
          }
        });
    return out;
  }

  private static int restartCount(JsonObject pod, String container) {
    for (var cs : pod.getAsJsonObject("status").getAsJsonArray("containerStatuses")) {
      JsonObject o = cs.getAsJsonObject();
      if (o.get("name").getAsString().equals(container)) {
        return o.get("restartCount").getAsInt();
      }
    }
    return -1;
  }

  private static String podId(KubeNode node, String pod) {
    return node.crictl(
            "pods", "-q", "--name", "^" + pod + "$", "--namespace", NS, "--state", "ready")
        .strip();
  }

  /** A client of its own for a recorder, with the applications' certificate the test read. */
  private EtcdTestClient applicationsClient(ChartRelease db) {
    java.nio.file.Path p = dir.resolve(db.name() + "-app-");
    return EtcdTestClient.withTls(
        java.nio.file.Path.of(p + "ca.crt"),
        java.nio.file.Path.of(p + "tls.crt"),
        java.nio.file.Path.of(p + "tls.key"),
        "localhost");
  }

  private int readAll(ChartRelease db) {
    String url = db.clientUrl(db.podIps().values().iterator().next());
    int found = 0;
    for (int i = 0; i < 100; i++) {
      if (("item " + i).equals(client.value(url, "inventory/" + i, 5000))) {
        found++;
      }
    }
    return found;
  }

  private static void mark(List<Recorder> recorders, History.Kind kind, String label) {
    recorders.forEach(r -> r.mark(kind, label));
  }

  private static Map<String, String> uids(Map<String, JsonObject> objects) {
    Map<String, String> out = new java.util.TreeMap<>();
    objects.forEach(
        (name, o) -> out.put(name, o.getAsJsonObject("metadata").get("uid").getAsString()));
    return out;
  }

  private static List<String> prefixed(String pod, List<String> lines) {
    return lines.stream().map(l -> pod + ": " + l).toList();
  }

  private static double seconds(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1e9;
  }
}
