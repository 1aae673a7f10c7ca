package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonObject;
import io.etcd.jetcd.api.Member;
import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Scale steps on the real node, chained in one install of the chart with its defaults, as a user
 * makes them, with a writer and a linearizable reader running throughout: 5 → 2 with the leader at
 * the highest ordinal, 2 → 1, 1 → 3, 3 → 5, 5 → 3 through {@code helm upgrade}, 4 → 3 while a
 * staying member's etcd is frozen, and 3 → 0 → 3. Each row ends with {@code replicas} ready voters;
 * what etcd itself shows (its member list and every member's {@code Status}, sampled every 100 ms)
 * gives the order of the removals and whether a leader was ever removed while it led. Each row's
 * time to settle, removals, longest stretch without a successful write and failed requests are
 * printed as a table (BENCHMARKS.md "Scale steps"). At the end every key written is read back.
 */
class ScaleStepsOnNodeE2E {

  static final String NS = "ledger";
  static final String STS = "ledger";

  /**
   * {@code -Dscale.bench=true} (the benchmark's run, not CI's): also 3 → 9 and 9 → 1, the largest
   * step the chart's schema allows (eight removals and a leadership move inside one budget), and
   * the same 5 → 2 beside it without the agent's removals; about 8 minutes more.
   */
  static final boolean WORST_STEP = Boolean.getBoolean("scale.bench");

  /** The longest write gap allowed in a step of a healthy cluster on this 2-core machine. */
  static final Duration MAX_GAP = Duration.ofSeconds(5);

  /** The chart's default TLS: set once the applications' certificate exists; plain below. */
  EtcdTestClient client;

  @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir;

  final List<String> table = new ArrayList<>();

  @Test
  void everyStepKeepsQuorumAndEndsWithReplicasVoters() throws Exception {
    assumeTrue(KubeNode.available(), "the node needs root");
    KubeNode node = KubeNode.shared();
    ChartRelease db = ChartRelease.withChartDefaults(node, STS, NS);
    Traffic traffic = null;
    try {
      db.createRestrictedNamespace();
      // nine members' CPU requests (200m each by default) would not fit this 2-core node
      db.install(
          WORST_STEP
              ? new String[] {
                "replicas=5", "etcd.resources.requests.cpu=50m", ChartRelease.QUICK_BOOTSTRAP
              }
              : new String[] {"replicas=5", ChartRelease.QUICK_BOOTSTRAP});
      db.useApplicationsCertificate(dir);
      client = db.client();
      db.awaitReadyVoters(5, Duration.ofMinutes(6));
      client.put(url(db, 0), "before", "kept".getBytes(StandardCharsets.UTF_8));
      Map<String, Long> five = db.memberIds();
      traffic = new Traffic(db);

      // 5 -> 2 by kubectl, the leader at the highest ordinal
      moveLeaderTo(db, five.get(pod(4)));
      Row a = step(db, traffic, "5 → 2, leader at ordinal 4 (kubectl)", 2, () -> scale(node, 2));
      assertThat(a.removed)
          .as("learners none; voters by ordinal down; the leader last")
          .containsExactly(pod(3), pod(2), pod(4));
      assertThat(a.removedWhileLeading)
          .as("etcd's own view: no member removed while it led")
          .isEmpty();
      a.assertHealthyGap();

      Row b = step(db, traffic, "2 → 1 (kubectl)", 1, () -> scale(node, 1));
      assertThat(b.removed).containsExactly(pod(1));
      assertThat(b.removedWhileLeading).isEmpty();
      b.assertHealthyGap();

      Row c = step(db, traffic, "1 → 3 (kubectl)", 3, () -> scale(node, 3));
      assertThat(c.removed).isEmpty();
      c.assertHealthyGap();
      for (int i = 1; i < 3; i++) {
        assertRejoined(node, db, i, five.get(pod(i)));
      }

      Row d = step(db, traffic, "3 → 5 (kubectl)", 5, () -> scale(node, 5));
      assertThat(d.removed).isEmpty();
      d.assertHealthyGap();
      for (int i = 3; i < 5; i++) {
        assertRejoined(node, db, i, five.get(pod(i)));
      }

      Row e =
          step(db, traffic, "5 → 3 (helm upgrade)", 3, () -> helmUpgrade(node, db, "replicas=3"));
      assertThat(e.removed).containsExactlyInAnyOrder(pod(3), pod(4));
      assertThat(e.removedWhileLeading).isEmpty();
      e.assertHealthyGap();

      // 4 -> 3 while a staying member's etcd is frozen: the surplus member leaves at once (2 of 3
      // left running keep quorum; keeping it would leave 2 of 4 running when its etcd stops)
      scale(node, 4);
      db.awaitReadyVoters(4, Duration.ofMinutes(4));
      String leader = leaderName(db);
      String frozen = pod(0).equals(leader) ? pod(1) : pod(0);
      long etcdPid = node.containerPid(NS, frozen, "etcd");
      signal("STOP", etcdPid);
      Row f;
      try {
        f =
            step(
                db,
                traffic,
                "4 → 3, " + frozen + "'s etcd frozen (kubectl)",
                3,
                () -> scale(node, 3),
                Duration.ofSeconds(40),
                frozen);
        assertThat(processState(etcdPid))
            .as("removed while the staying member was still frozen, not after it came back")
            .isEqualTo('T');
      } finally {
        Processes.run("kill", "-CONT", Long.toString(etcdPid)); // gone if the kubelet restarted it
      }
      assertThat(f.removed).containsExactly(pod(3));
      db.awaitReadyVoters(3, Duration.ofMinutes(3));
      Map<String, Long> three = db.memberIds();

      // 3 -> 0 -> 3: a pause removes nothing
      Row g =
          step(
              db,
              traffic,
              "3 → 0 → 3 (kubectl)",
              3,
              () -> {
                scale(node, 0);
                Poll.until("no Pod left", Duration.ofMinutes(3), () -> db.pods().isEmpty());
                scale(node, 3);
              });
      assertThat(g.removed).isEmpty();
      assertThat(db.memberIds()).as("replicas 0 is a pause").isEqualTo(three);

      if (WORST_STEP) {
        Row up = step(db, traffic, "3 → 9 (kubectl)", 9, () -> scale(node, 9));
        up.assertHealthyGap();
        moveLeaderTo(db, db.memberIds().get(pod(8)));
        Row worst =
            step(db, traffic, "9 → 1, leader at ordinal 8 (kubectl)", 1, () -> scale(node, 1));
        assertThat(worst.removed)
            .containsExactly(pod(7), pod(6), pod(5), pod(4), pod(3), pod(2), pod(1), pod(8));
        assertThat(worst.removedWhileLeading).isEmpty();
        worst.assertHealthyGap();
      }

      traffic.stop();
      System.out.println(
          "[scale-steps] | step | settled | removed, in order | longest write gap"
              + " | failed writes / reads | writes |");
      table.forEach(r -> System.out.println("[scale-steps] " + r));
      assertThat(client.value(url(db, 0), "before", 5000)).isEqualTo("kept");
      assertThat(
              node.admin()
                  .getJson(
                      "/api/v1/namespaces/"
                          + NS
                          + "/events?fieldSelector=reason%3DFailedPreStopHook")
                  .getAsJsonArray("items"))
          .as("etcd's hold answered every Pod the kubelet stopped, over HTTPS")
          .isEmpty();
      List<String> lost = traffic.lostKeys(url(db, 0));
      assertThat(lost)
          .as("every write etcd accepted is kept (of %d)", traffic.written.size())
          .isEmpty();
    } finally {
      if (traffic != null) {
        traffic.stop();
      }
      try {
        db.uninstall();
      } catch (RuntimeException e) {
        // not thrown from here: it would hide the failure that ended the test early
        System.out.println("[scale-steps] uninstall failed: " + e.getMessage());
      } finally {
        node.tool("kubectl", 300, "delete", "namespace", NS, "--wait=true", "--ignore-not-found");
        db.client().close();
      }
    }
  }

  /**
   * The plain setup beside the agent: the same chart and the same 5 → 2, with the agent's removals
   * (and so etcd's hold) off, as the chart was before. Three of five voters stop with their Pods,
   * no member is removed, and the two left have no quorum: writes fail until the user scales back.
   */
  @Test
  void withoutTheAgentsRemovalsFiveToTwoLosesQuorum() throws Exception {
    assumeTrue(KubeNode.available(), "the node needs root");
    assumeTrue(WORST_STEP, "the benchmark's side-by-side run only (-Dscale.bench=true)");
    KubeNode node = KubeNode.shared();
    client = new EtcdTestClient();
    ChartRelease db = new ChartRelease(node, "plain", "plain", client);
    Traffic traffic = null;
    try {
      db.createRestrictedNamespace();
      db.install("replicas=5", "agent.removeSurplusMembers=false", ChartRelease.QUICK_BOOTSTRAP);
      db.awaitReadyVoters(5, Duration.ofMinutes(6));
      traffic = new Traffic(db);
      traffic.beginRow();
      long started = System.nanoTime();
      node.kubectl("scale", "statefulset", "plain", "-n", "plain", "--replicas=2");
      Poll.until("two Pods left", Duration.ofMinutes(3), () -> db.pods().size() == 2);
      // a minute after the scale, as a user waits
      Poll.until(
          "a minute after the scale",
          Duration.ofSeconds(90),
          () -> System.nanoTime() - started > 60_000_000_000L);
      Row row = new Row("5 → 2 without the agent's removals (plain)");
      traffic.endRow(row);
      row.settledSeconds = (System.nanoTime() - started) / 1e9;
      int members = client.members(db.clientUrl(db.podIps().get("plain-0")), 2000).size();
      System.out.printf(
          "[scale-steps] | %s | never (%d members after %.0f s) | none | %.1f s | %d / %d | %d |%n",
          row.name,
          members,
          row.settledSeconds,
          row.longestGapMillis / 1000.0,
          row.failedWrites,
          row.failedReads,
          row.writes);
      assertThat(members).as("no member removed").isEqualTo(5);
      assertThat(row.failedWrites).as("two of five voters have no quorum").isPositive();
    } finally {
      if (traffic != null) {
        traffic.stop();
      }
      try {
        db.uninstall();
      } finally {
        node.tool(
            "kubectl", 300, "delete", "namespace", "plain", "--wait=true", "--ignore-not-found");
        client.close();
      }
    }
  }

  /** One row of the matrix, as etcd and the client saw it. */
  final class Row {
    final String name;
    final List<String> removed = new ArrayList<>();
    final List<String> removedWhileLeading = new ArrayList<>();
    double settledSeconds;
    long longestGapMillis;
    int failedWrites;
    int failedReads;
    int writes;

    Row(String name) {
      this.name = name;
    }

    void assertHealthyGap() {
      assertThat(Duration.ofMillis(longestGapMillis))
          .as("%s: the longest stretch without a successful write", name)
          .isLessThanOrEqualTo(MAX_GAP);
    }
  }

  private Row step(ChartRelease db, Traffic traffic, String name, int replicas, Action action)
      throws Exception {
    return step(db, traffic, name, replicas, action, Duration.ofMinutes(6), null);
  }

  /**
   * Runs one step: samples etcd's view while {@code action} scales, until the member list is
   * ordinals 0 .. replicas-1, all voters, and (unless a member is {@code frozen}) every Pod a ready
   * voter.
   */
  private Row step(
      ChartRelease db,
      Traffic traffic,
      String name,
      int replicas,
      Action action,
      Duration limit,
      String frozen)
      throws Exception {
    Row row = new Row(name);
    EtcdView view = new EtcdView(db);
    traffic.beginRow();
    long started = System.nanoTime();
    action.run();
    Set<String> want = new TreeSet<>();
    for (int i = 0; i < replicas; i++) {
      want.add(pod(i));
    }
    Poll.until(
        name + ": members " + want,
        limit,
        () -> {
          List<Member> members = view.lastMembers();
          return members != null
              && members.stream().map(ChartRelease::podOf).collect(Collectors.toSet()).equals(want)
              && members.stream().noneMatch(Member::getIsLearner);
        });
    if (frozen == null) {
      db.awaitReadyVoters(replicas, limit);
    }
    row.settledSeconds = (System.nanoTime() - started) / 1e9;
    view.stop();
    row.removed.addAll(view.removedInOrder());
    row.removedWhileLeading.addAll(view.removedWhileLeading());
    traffic.endRow(row);
    String line =
        String.format(
            "| %s | %.1f s | %s | %.1f s | %d / %d | %d |",
            name,
            row.settledSeconds,
            row.removed.isEmpty() ? "none" : String.join(", ", row.removed),
            row.longestGapMillis / 1000.0,
            row.failedWrites,
            row.failedReads,
            row.writes);
    table.add(line);
    System.out.println("[scale-steps] " + line);
    return row;
  }

  interface Action {
    void run() throws Exception;
  }

  /**
   * etcd's own view, every 100 ms: the member list (from the first Pod whose member answers) and
   * each member's {@code Status}. A member is removed while it leads when the last {@code Status}
   * it answered before it left the list still named itself the leader.
   */
  private final class EtcdView {
    final AtomicBoolean running = new AtomicBoolean(true);
    volatile List<Member> members;
    final List<String> order = new CopyOnWriteArrayList<>();
    final Map<String, Boolean> lastSaidItLeads = new ConcurrentHashMap<>();
    final List<String> whileLeading = new CopyOnWriteArrayList<>();
    final Thread thread;
    final Thread leaders;

    EtcdView(ChartRelease db) {
      thread =
          new Thread(
              () -> {
                Set<String> before = null;
                while (running.get()) {
                  long t0 = System.nanoTime();
                  Map<String, String> ips = allPodIps(db);
                  List<Member> list = null;
                  for (String ip : ips.values()) {
                    try {
                      list = client.members(db.clientUrl(ip), 1000);
                      break;
                    } catch (RuntimeException e) {
                      // a learner or a stopped member: the next
                    }
                  }
                  if (list != null) {
                    Set<String> now =
                        list.stream()
                            .map(ChartRelease::podOf)
                            .collect(Collectors.toCollection(TreeSet::new));
                    if (before != null) {
                      for (String gone : before) {
                        if (!now.contains(gone)) {
                          order.add(gone);
                          if (lastSaidItLeads.getOrDefault(gone, false)) {
                            whileLeading.add(gone);
                          }
                        }
                      }
                    }
                    before = now;
                    members = list;
                  }
                  long sleep = 50 - (System.nanoTime() - t0) / 1_000_000;
                  if (sleep > 0) {
                    try {
                      Thread.sleep(sleep); // the sampling period, not a wait for state
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                }
              },
              "etcd-view");
      // who leads, asked of each member on a thread of its own: a member that stops answering
      // (its 500 ms deadline, a TLS handshake) must not slow the member list's sampling, or two
      // removals could fall between two samples and their order be lost
      leaders =
          new Thread(
              () -> {
                while (running.get()) {
                  List<Member> list = members;
                  Map<String, String> ips = list == null ? Map.of() : allPodIps(db);
                  for (Member m : list == null ? List.<Member>of() : list) {
                    String ip = ips.get(ChartRelease.podOf(m));
                    if (ip == null) {
                      continue;
                    }
                    try {
                      long leader = client.status(db.clientUrl(ip), 500).getLeader();
                      lastSaidItLeads.put(ChartRelease.podOf(m), leader == m.getID());
                    } catch (RuntimeException e) {
                      // not answering: its last answer stands
                    }
                  }
                  java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L); // pacing
                }
              },
              "etcd-leaders");
      thread.start();
      leaders.start();
      Poll.until("etcd's first view", Duration.ofSeconds(30), () -> members != null);
    }

    List<Member> lastMembers() {
      return members;
    }

    List<String> removedInOrder() {
      return List.copyOf(order);
    }

    List<String> removedWhileLeading() {
      return List.copyOf(whileLeading);
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(10_000);
      leaders.join(10_000);
    }
  }

  /**
   * A writer and a linearizable reader through the members that stay in every step (ordinal 0
   * first), 10 times a second each, as an application with those endpoints does: a request fails
   * only when no endpoint answers it within 2 s.
   */
  private final class Traffic {
    final AtomicBoolean running = new AtomicBoolean(true);
    final Map<String, Boolean> written = new ConcurrentHashMap<>();
    final ChartRelease db;
    final Thread thread;
    volatile long lastWriteOk = System.nanoTime();
    volatile long longestGap;
    volatile int writes;
    volatile int failedWrites;
    volatile int failedReads;

    Traffic(ChartRelease db) {
      this.db = db;
      thread = new Thread(this::loop, "traffic");
      thread.start();
    }

    private void loop() {
      int i = 0;
      String lastKey = "before";
      while (running.get()) {
        long t0 = System.nanoTime();
        String key = "w/" + i++;
        if (request(u -> client.put(u, key, new byte[64], 2000))) {
          written.put(key, true);
          writes++;
          long now = System.nanoTime();
          longestGap = Math.max(longestGap, now - lastWriteOk);
          lastWriteOk = now;
          lastKey = key;
        } else {
          failedWrites++;
        }
        String read = lastKey;
        if (!request(u -> client.value(u, read, 2000))) {
          failedReads++;
        }
        long sleep = 100 - (System.nanoTime() - t0) / 1_000_000;
        if (sleep > 0) {
          try {
            Thread.sleep(sleep); // the client's request rate, not a wait for state
          } catch (InterruptedException e) {
            return;
          }
        }
      }
    }

    private Map<String, String> ips = Map.of();
    private long ipsRead;

    private boolean request(java.util.function.Consumer<String> call) {
      if (System.nanoTime() - ipsRead > 1_000_000_000L) {
        try {
          ips = db.podIps();
          ipsRead = System.nanoTime();
        } catch (RuntimeException e) {
          // the API server did not answer: the addresses known stand
        }
      }
      for (String ip : ips.values()) {
        try {
          call.accept(db.clientUrl(ip));
          return true;
        } catch (RuntimeException e) {
          // the next endpoint
        }
      }
      return false;
    }

    void beginRow() {
      lastWriteOk = System.nanoTime();
      longestGap = 0;
      writes = 0;
      failedWrites = 0;
      failedReads = 0;
    }

    void endRow(Row row) {
      row.longestGapMillis = Math.max(longestGap, System.nanoTime() - lastWriteOk) / 1_000_000;
      row.writes = writes;
      row.failedWrites = failedWrites;
      row.failedReads = failedReads;
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(30_000);
    }

    List<String> lostKeys(String endpoint) {
      List<String> lost = new ArrayList<>();
      for (String key : new TreeSet<>(written.keySet())) {
        if (client.value(endpoint, key, 5000) == null) {
          lost.add(key);
        }
      }
      return lost;
    }
  }

  /** Every Pod's address by name, those being deleted too (their etcds are held). */
  private static Map<String, String> allPodIps(ChartRelease db) {
    Map<String, String> ips = new java.util.TreeMap<>();
    for (JsonObject pod : db.pods()) {
      JsonObject status = pod.getAsJsonObject("status");
      if (status.has("podIP")) {
        ips.put(
            pod.getAsJsonObject("metadata").get("name").getAsString(),
            status.get("podIP").getAsString());
      }
    }
    return ips;
  }

  private void assertRejoined(KubeNode node, ChartRelease db, int ordinal, long removedId) {
    Map<String, Long> now = db.memberIds();
    assertThat(now.get(pod(ordinal)))
        .as("%s joined as a new member", pod(ordinal))
        .isNotEqualTo(removedId);
    JsonObject status = db.etcdMembers().get(pod(ordinal)).getAsJsonObject("status");
    assertThat(status.getAsJsonObject("join").get("decision").getAsString())
        .isEqualTo("RejoinedAfterRemoval");
    Path data = volumePath(node, pod(ordinal)).resolve("data");
    assertThat(data.resolve("removed-member-" + Long.toHexString(removedId)))
        .as("the removed member's data is set aside, not deleted")
        .isDirectory();
  }

  private static char processState(long pid) throws java.io.IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    return stat.charAt(stat.lastIndexOf(')') + 2);
  }

  private static String pod(int ordinal) {
    return STS + "-" + ordinal;
  }

  private static String url(ChartRelease db, int ordinal) {
    return db.clientUrl(db.podIps().get(pod(ordinal)));
  }

  private static void scale(KubeNode node, int replicas) {
    node.kubectl("scale", "statefulset", STS, "-n", NS, "--replicas=" + replicas);
  }

  /** Helm 4 applies server-side: after kubectl scale it must take {@code replicas} back. */
  private static void helmUpgrade(KubeNode node, ChartRelease db, String... sets) {
    List<String> args = new ArrayList<>(List.of(db.helmArgs("upgrade", sets)));
    args.add("--force-conflicts");
    node.helm(args.toArray(String[]::new));
  }

  private static void signal(String signal, long pid) {
    Processes.Result r = Processes.run("kill", "-" + signal, Long.toString(pid));
    assertThat(r.exitCode()).as("kill -" + signal + " " + pid + ": " + r.output()).isZero();
  }

  private String leaderName(ChartRelease db) {
    Map<Long, String> names = new LinkedHashMap<>();
    db.members().forEach(m -> names.put(m.getID(), m.getName()));
    for (String ip : db.podIps().values()) {
      try {
        String name = names.get(client.status(db.clientUrl(ip)).getLeader());
        if (name != null) {
          return name;
        }
      } catch (RuntimeException e) {
        // a member that does not answer: ask the next
      }
    }
    throw new IllegalStateException("no member named the leader");
  }

  private void moveLeaderTo(ChartRelease db, long target) {
    String leader = leaderName(db);
    client.moveLeader(db.clientUrl(db.podIps().get(leader)), target);
    Poll.until(
        "leadership moved to " + Long.toHexString(target),
        Duration.ofSeconds(30),
        () -> client.status(url(db, 0)).getLeader() == target);
  }

  /** The host directory behind the Pod's data volume (local-path: a host path). */
  private static Path volumePath(KubeNode node, String pod) {
    String pv =
        node.getJson("pvc", "data-" + pod, "-n", NS)
            .getAsJsonObject("spec")
            .get("volumeName")
            .getAsString();
    JsonObject spec = node.getJson("pv", pv).getAsJsonObject("spec");
    JsonObject source =
        spec.has("hostPath") ? spec.getAsJsonObject("hostPath") : spec.getAsJsonObject("local");
    Path path = Path.of(source.get("path").getAsString());
    assertThat(Files.isDirectory(path)).as(path.toString()).isTrue();
    return path;
  }
}
