package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Scale-down on the real node, as a user does it: 5 → 3 with {@code kubectl scale} while a client
 * writes throughout (the surplus leader leaves last, after leadership moved), back to 5 with {@code
 * helm upgrade} on the retained volumes (the removed members' data is set aside, they join again as
 * learners and are promoted), 5 → 3 with {@code helm upgrade}; {@code replicas: 0} and back removes
 * nothing; ordinal 3 joins a third time (one set-aside copy kept); the catch-up path removes a
 * surplus member whose agent was frozen before its fast path could run, and only once; and while a
 * staying member is down a scale-down removes nothing, says why (in /status and the
 * membership-settled condition), and completes once the member is back.
 */
class ScaleDownOnNodeE2E {

  static final String NS = "ledger";
  static final String STS = "ledger";

  /** Shorter than the chart's defaults so the catch-up cases take seconds, not minutes. */
  static final String[] SETS = {
    "terminationGracePeriodSeconds=15",
    "agent.scaleDownBudget=10s",
    "agent.extraEnv[0].name=ETCD_MEMBER_AGENT_SCALE_DOWN_CHECK_INTERVAL",
    "agent.extraEnv[0].value=5s"
  };

  final EtcdTestClient client = new EtcdTestClient();

  @Test
  void surplusMembersLeaveOneAtATimeAndCanComeBackAsLearners() throws Exception {
    assumeTrue(KubeNode.available(), "the node needs root");
    KubeNode node = KubeNode.shared();
    ChartRelease db = new ChartRelease(node, STS, NS, client);
    try {
      db.createRestrictedNamespace();
      db.install(sets("replicas=5"));
      db.awaitReadyVoters(5, Duration.ofMinutes(6));
      db.awaitAgentReader(db.podIps().get(pod(0)));
      Map<String, Long> five = db.memberIds();
      client.put(url(db, 0), "before", "kept".getBytes(StandardCharsets.UTF_8));

      // 5 -> 3 by kubectl, the leader among the surplus, a client writing throughout
      moveLeaderTo(db, five.get(pod(4)));
      Writer writer = new Writer(db);
      long started = System.nanoTime();
      scale(node, 3);
      awaitMembers(db, 3, Duration.ofMinutes(3));
      System.out.printf(
          "[scale-down] 5 -> 3 (kubectl): members removed in %.1f s%n", secs(started));
      db.awaitReadyVoters(3, Duration.ofMinutes(2));
      writer.stop();
      System.out.printf(
          "[scale-down] client: %d writes, %d failed, slowest %d ms%n",
          writer.writes.get(), writer.failures.get(), writer.slowestMillis.get());
      assertThat(writer.failures.get()).as("writes no endpoint accepted").isZero();
      assertThat(writer.writes.get()).isPositive();
      Poll.until(
          "both removals' Events",
          Duration.ofSeconds(30),
          () -> removalMessages(node, "SurplusMemberRemoved").size() >= 2);
      List<String> removed = removalMessages(node, "SurplusMemberRemoved");
      assertThat(removed).as("one removal each").hasSize(2);
      for (int i = 3; i < 5; i++) {
        String id = Long.toHexString(five.get(pod(i)));
        assertThat(removed)
            .as("%s removed", pod(i))
            .anyMatch(m -> m.contains("member " + id + " ("));
      }
      // etcd hands leadership on at its own SIGTERM too; either way no member leads when removed
      for (String m : removed) {
        String removedId = m.replaceAll(".*surplus member ([0-9a-f]+) .*", "$1");
        assertThat(m).as("never the leader").doesNotContain("while member " + removedId + " led");
      }
      assertThat(leaderName(db)).isIn(pod(0), pod(1), pod(2));

      // 3 -> 5 by helm on the kept volumes: set-aside data, new learners, promoted
      started = System.nanoTime();
      helmUpgrade(node, db, "replicas=5");
      db.awaitReadyVoters(5, Duration.ofMinutes(5));
      System.out.printf(
          "[scale-down] 3 -> 5 (helm) on kept volumes: 5 ready voters in %.1f s%n", secs(started));
      Map<String, Long> again = db.memberIds();
      for (int i = 3; i < 5; i++) {
        assertThat(again.get(pod(i)))
            .as("%s joined as a new member", pod(i))
            .isNotEqualTo(five.get(pod(i)));
        Path data = volumePath(node, pod(i)).resolve("data");
        assertThat(data.resolve("removed-member-" + Long.toHexString(five.get(pod(i)))))
            .as("the removed member's data is set aside, not deleted")
            .isDirectory();
        assertThat(joinDecision(db, pod(i))).isEqualTo("RejoinedAfterRemoval");
      }

      // 5 -> 3 by helm
      started = System.nanoTime();
      helmUpgrade(node, db, "replicas=3");
      awaitMembers(db, 3, Duration.ofMinutes(3));
      System.out.printf("[scale-down] 5 -> 3 (helm): members removed in %.1f s%n", secs(started));
      db.awaitReadyVoters(3, Duration.ofMinutes(2));
      Map<String, Long> three = db.memberIds();

      // a pause at 0 removes nothing (a rolling restart, a deleted Pod and helm uninstall, with
      // the same defaults: NodeRestartsE2E asserts the same member IDs after each)
      scale(node, 0);
      Poll.until("no Pod left", Duration.ofMinutes(3), () -> db.pods().isEmpty());
      scale(node, 3);
      db.awaitReadyVoters(3, Duration.ofMinutes(4));
      assertThat(db.memberIds()).as("replicas 0 is a pause").isEqualTo(three);
      assertThat(client.value(url(db, 0), "before", 5000)).isEqualTo("kept");

      // 3 -> 4 again: ordinal 3's third life; the set-aside copy is its second life's data, one
      // copy kept (the first life's copy replaced), and the new member joined as a learner
      scale(node, 4);
      db.awaitReadyVoters(4, Duration.ofMinutes(4));
      Path thirdLife = volumePath(node, pod(3)).resolve("data");
      assertThat(thirdLife.resolve("removed-member-" + Long.toHexString(again.get(pod(3)))))
          .as("the newest removed member's data is kept")
          .isDirectory();
      assertThat(thirdLife.resolve("removed-member-" + Long.toHexString(five.get(pod(3)))))
          .as("one copy kept: the older one is replaced")
          .doesNotExist();
      assertThat(joinDecision(db, pod(3))).isEqualTo("RejoinedAfterRemoval");

      // the catch-up path: the surplus Pod's agent frozen, so its fast path never runs
      long frozenId = db.memberIds().get(pod(3));
      long agentPid = node.containerPid(NS, pod(3), "agent");
      signal("STOP", agentPid);
      started = System.nanoTime();
      scale(node, 3);
      awaitMembers(db, 3, Duration.ofMinutes(3));
      System.out.printf(
          "[scale-down] catch-up: a frozen surplus agent's member removed in %.1f s%n",
          secs(started));
      // the Event is posted by the acting agent's publisher, after the removal: wait for it
      java.util.function.Supplier<List<String>> removalsOfFrozen =
          () ->
              removalMessages(node, "SurplusMemberRemoved").stream()
                  .filter(m -> m.contains(Long.toHexString(frozenId)))
                  .toList();
      Poll.until(
          "the catch-up removal's Event",
          Duration.ofSeconds(30),
          () -> !removalsOfFrozen.get().isEmpty());
      List<String> caughtUp = removalsOfFrozen.get();
      assertThat(caughtUp).as("removed once, by the catch-up path").hasSize(1);
      assertThat(caughtUp.get(0)).contains("scale-down-catch-up");

      // unsafe: a staying member down blocks the removal, which completes once it is back
      scale(node, 4);
      db.awaitReadyVoters(4, Duration.ofMinutes(4));
      String leader = leaderName(db);
      String down = pod(0).equals(leader) ? pod(1) : pod(0);
      long etcdPid = node.containerPid(NS, down, "etcd");
      String surplusIp = db.podIps().get(pod(3));
      signal("STOP", etcdPid);
      java.util.concurrent.CompletableFuture<String> surplusLog =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () ->
                  node.tool(
                          "kubectl",
                          90,
                          "logs",
                          "-f",
                          pod(3),
                          "-c",
                          "agent",
                          "-n",
                          NS,
                          "--since=5s")
                      .toString());
      try {
        scale(node, 3);
        // the surplus member's own agent, within its budget, says why it stays, in /status and
        // as its Pod's membership-settled condition (the kubelet's liveness probe restarts the
        // frozen etcd after about 30 s, which ends the test's fault)
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean inStatus =
            new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean inCondition =
            new java.util.concurrent.atomic.AtomicBoolean();
        try {
          Poll.until(
              "the surplus agent says why its member stays",
              Duration.ofSeconds(20),
              () -> {
                String status = "unreachable";
                try {
                  status = scaleDownStatus(db, surplusIp).get("reason").getAsString();
                } catch (RuntimeException e) {
                  // the agent has stopped: its Pod's condition may still say it
                }
                String condition = membershipSettled(node, pod(3));
                String now = "/status " + status + ", condition " + condition;
                if (seen.isEmpty() || !seen.get(seen.size() - 1).equals(now)) {
                  seen.add(now);
                }
                inStatus.compareAndSet(false, status.equals("SurplusStayingMemberNotReady"));
                inCondition.compareAndSet(
                    false, condition.equals("False/SurplusStayingMemberNotReady"));
                return inStatus.get() && inCondition.get();
              });
        } catch (AssertionError e) {
          String log;
          try {
            log = surplusLog.get(60, java.util.concurrent.TimeUnit.SECONDS);
          } catch (Exception notEnded) {
            log = "(no log: " + notEnded + ")";
          }
          throw new AssertionError(
              e.getMessage() + "; seen: " + seen + "; the surplus agent's log: " + log, e);
        }
        assertThat(memberNames(db)).as("nothing removed while unsafe").hasSize(4);
        assertThat(removalMessages(node, "SurplusStayingMemberNotReady")).isNotEmpty();
      } finally {
        Processes.run("kill", "-CONT", Long.toString(etcdPid)); // gone if the kubelet restarted it
      }
      started = System.nanoTime();
      awaitMembers(db, 3, Duration.ofMinutes(2));
      System.out.printf(
          "[scale-down] blocked removal completed %.1f s after the member came back%n",
          secs(started));
      Poll.until(
          "the leader's agent finds nothing surplus",
          Duration.ofSeconds(30),
          () -> "True/NoSurplusMember".equals(membershipSettled(node, leaderName(db))));
      Poll.until(
          "a follower's agent does not decide",
          Duration.ofSeconds(30),
          () ->
              "Unknown/NotTheLeader"
                  .equals(
                      membershipSettled(node, pod(0).equals(leaderName(db)) ? pod(1) : pod(0))));
    } finally {
      try {
        db.uninstall();
      } catch (RuntimeException e) {
        // not thrown from here: it would hide the failure that ended the test early
        System.out.println("[scale-down] uninstall failed: " + e.getMessage());
      } finally {
        node.tool("kubectl", 300, "delete", "namespace", NS, "--wait=true", "--ignore-not-found");
        client.close();
      }
    }
  }

  private static String[] sets(String... more) {
    List<String> all = new ArrayList<>(List.of(SETS));
    all.addAll(List.of(more));
    return all.toArray(String[]::new);
  }

  private static String pod(int ordinal) {
    return STS + "-" + ordinal;
  }

  private static String url(ChartRelease db, int ordinal) {
    return db.clientUrl(db.podIps().get(pod(ordinal)));
  }

  private static double secs(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1e9;
  }

  private static void scale(KubeNode node, int replicas) {
    node.kubectl("scale", "statefulset", STS, "-n", NS, "--replicas=" + replicas);
  }

  /** Helm 4 applies server-side: after kubectl scale it must take {@code replicas} back. */
  private static void helmUpgrade(KubeNode node, ChartRelease db, String... more) {
    List<String> args = new ArrayList<>(List.of(db.helmArgs("upgrade", sets(more))));
    args.add("--force-conflicts");
    node.helm(args.toArray(String[]::new));
  }

  private static void signal(String signal, long pid) {
    Processes.Result r = Processes.run("kill", "-" + signal, Long.toString(pid));
    assertThat(r.exitCode()).as("kill -" + signal + " " + pid + ": " + r.output()).isZero();
  }

  /** The member list holds exactly ordinals 0 .. n-1, all started voters. */
  private static void awaitMembers(ChartRelease db, int n, Duration limit) {
    Set<String> want = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      want.add(pod(i));
    }
    Poll.until(
        "members " + want,
        limit,
        () -> {
          List<Member> members = membersFromStaying(db);
          return members.stream().map(Member::getName).collect(Collectors.toSet()).equals(want)
              && members.stream().noneMatch(Member::getIsLearner);
        });
  }

  private static Set<String> memberNames(ChartRelease db) {
    return membersFromStaying(db).stream()
        .map(ChartRelease::podOf)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /** The member list as ledger-0 answers it (it stays in every case here). */
  private static List<Member> membersFromStaying(ChartRelease db) {
    return db.members();
  }

  private String leaderName(ChartRelease db) {
    for (Map.Entry<String, String> pod : db.podIps().entrySet()) {
      try {
        long leader = client.status(db.clientUrl(pod.getValue())).getLeader();
        for (Member m : db.members()) {
          if (m.getID() == leader) {
            return m.getName();
          }
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

  /** The messages of the StatefulSet's Events with this reason, oldest first. */
  private static List<String> removalMessages(KubeNode node, String reason) {
    List<JsonObject> events = new ArrayList<>();
    for (JsonElement e :
        node.admin()
            .getJson(
                "/api/v1/namespaces/"
                    + NS
                    + "/events?fieldSelector=involvedObject.kind%3DStatefulSet,reason%3D"
                    + reason)
            .getAsJsonArray("items")) {
      events.add(e.getAsJsonObject());
    }
    events.sort(
        java.util.Comparator.comparing(
            e -> e.getAsJsonObject("metadata").get("creationTimestamp").getAsString()));
    return events.stream().map(e -> e.get("message").getAsString()).toList();
  }

  /** The Pod's membership-settled condition as status/reason, or "absent". */
  private static String membershipSettled(KubeNode node, String pod) {
    JsonObject status = node.getJson("pod", pod, "-n", NS).getAsJsonObject("status");
    if (status.has("conditions")) {
      for (var c : status.getAsJsonArray("conditions")) {
        JsonObject o = c.getAsJsonObject();
        if (o.get("type").getAsString().endsWith("/membership-settled")) {
          return o.get("status").getAsString() + "/" + o.get("reason").getAsString();
        }
      }
    }
    return "absent";
  }

  private static JsonObject scaleDownStatus(ChartRelease db, String ip) {
    return JsonParser.parseString(db.agentGet(ip, "/status").body())
        .getAsJsonObject()
        .getAsJsonObject("scaleDown");
  }

  private static String joinDecision(ChartRelease db, String pod) {
    JsonObject status = db.etcdMembers().get(pod).getAsJsonObject("status");
    return status.getAsJsonObject("join").get("decision").getAsString();
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

  /**
   * A client that writes through the staying members for as long as the scale-down runs, as an
   * application with every staying endpoint does: a write fails only when no endpoint accepts it.
   */
  private final class Writer {
    final AtomicBoolean running = new AtomicBoolean(true);
    final AtomicInteger writes = new AtomicInteger();
    final AtomicInteger failures = new AtomicInteger();
    final AtomicLong slowestMillis = new AtomicLong();
    final Thread thread;

    Writer(ChartRelease db) {
      List<String> urls = List.of(url(db, 0), url(db, 1), url(db, 2));
      thread =
          new Thread(
              () -> {
                int i = 0;
                while (running.get()) {
                  long t0 = System.nanoTime();
                  boolean ok = false;
                  for (String u : urls) {
                    try {
                      client.put(u, "w/" + i, new byte[64]);
                      ok = true;
                      break;
                    } catch (RuntimeException e) {
                      // the next endpoint
                    }
                  }
                  long ms = (System.nanoTime() - t0) / 1_000_000;
                  slowestMillis.accumulateAndGet(ms, Math::max);
                  (ok ? writes : failures).incrementAndGet();
                  i++;
                  try {
                    Thread.sleep(20); // the client's write rate, not a wait for state
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "writer");
      thread.start();
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(30_000);
    }
  }
}
