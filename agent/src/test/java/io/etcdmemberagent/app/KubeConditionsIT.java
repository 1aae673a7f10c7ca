package io.etcdmemberagent.app;

import static io.etcdmemberagent.testing.KubePods.PREFIX;
import static io.etcdmemberagent.testing.KubePods.condition;
import static io.etcdmemberagent.testing.KubePods.field;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent (real etcd, the primary version) publishing Pod conditions and events to a real
 * kube-apiserver, as the chart's ServiceAccount with the chart's Role and a TokenRequest token,
 * never as admin. What the server stored is read back by the test's admin; what the agent sent is
 * in the server's audit log. The agent's Kubernetes side does not depend on the etcd version (the
 * learner sequence per etcd version is covered by the learner and promotion tests).
 */
class KubeConditionsIT {

  static final String VERSION = EtcdBinaries.primary();
  static final AtomicInteger NAMESPACES = new AtomicInteger();

  @TempDir static Path shared;
  static KubeControlPlane kube;

  @TempDir Path dir;
  KubePods pods;

  @BeforeAll
  static void controlPlane() {
    kube = KubeControlPlane.start(shared.resolve("kube"));
    System.out.println("kube-apiserver " + kube.version());
  }

  @AfterAll
  static void stop() {
    if (kube != null) {
      kube.close();
    }
  }

  @BeforeEach
  void namespace() {
    pods =
        new KubePods(kube, "conditions-" + NAMESPACES.incrementAndGet(), "etcd").withChartRbac(dir);
  }

  /** The agent with a kubeconfig whose token file holds a token of the chart's ServiceAccount. */
  private InProcessAgent agent(EtcdMember member, String pod, Path tokenFile, String... extra) {
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--etcd-endpoint=" + member.clientUrl(),
                "--poll-interval=500ms",
                "--learner-poll-interval=200ms",
                "--etcd-timeout=1s",
                "--kube=on",
                "--kubeconfig="
                    + kube.tokenKubeconfig(dir.resolve("kubeconfig"), kube.url(), tokenFile),
                "--pod-name=" + pod,
                "--pod-namespace=" + pods.namespace(),
                "--kube-timeout=1s"));
    flags.addAll(List.of(extra));
    return InProcessAgent.start(flags.toArray(String[]::new));
  }

  /** A token bound to the Pod, as the kubelet projects it. */
  private Path podToken(String pod, String uid) {
    return pods.tokenFile(dir.resolve("token"), KubePods.boundTo("Pod", pod, uid));
  }

  private boolean readyIs(String pod, String status) {
    return status.equals(field(pods.conditions(pod), "ready", "status"));
  }

  /** The agent's requests of one verb and subresource, as the server's audit log has them. */
  private List<JsonObject> requests(String verb, String subresource) {
    String user = "system:serviceaccount:" + pods.namespace() + ":" + pods.serviceAccount();
    return kube.audit().stream()
        .filter(a -> a.getAsJsonObject("user").get("username").getAsString().equals(user))
        .filter(a -> a.get("verb").getAsString().equals(verb))
        .filter(
            a -> {
              JsonObject ref = a.getAsJsonObject("objectRef");
              String sub = ref.has("subresource") ? ref.get("subresource").getAsString() : "";
              return sub.equals(subresource);
            })
        .toList();
  }

  private static int code(JsonObject audit) {
    return audit.getAsJsonObject("responseStatus").get("code").getAsInt();
  }

  @Test
  void aLearnerJoiningAndPromotedGivesTheExactConditionSequence() throws Exception {
    String uid = pods.createPod("etcd-3");
    pods.seedForeignConditions("etcd-3");
    JsonArray foreignBefore = foreign(pods.conditions("etcd-3"));
    List<JsonArray> history = new CopyOnWriteArrayList<>();
    String path =
        "/api/v1/namespaces/"
            + pods.namespace()
            + "/pods?watch=1&fieldSelector=metadata.name%3Detcd-3&resourceVersion="
            + pods.pod("etcd-3").getAsJsonObject("metadata").get("resourceVersion").getAsString();
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 3);
        AutoCloseable watch =
            kube.admin()
                .watch(
                    path,
                    e -> {
                      JsonObject status = e.getAsJsonObject("object").getAsJsonObject("status");
                      if (status != null && status.has("conditions")) {
                        history.add(status.getAsJsonArray("conditions"));
                      }
                    })) {
      EtcdMember learner = cluster.addMember(true);
      try (InProcessAgent agent =
          agent(
              learner,
              "etcd-3",
              podToken("etcd-3", uid),
              "--cluster-endpoints=" + cluster.clientUrls(),
              "--peer-urls=" + learner.peerUrl())) {
        Poll.until(
            "the agent's first patch",
            Duration.ofSeconds(20),
            () -> history.stream().anyMatch(h -> condition(h, PREFIX + "ready") != null));
        cluster.startJoined(learner);
        Poll.until(
            "ready True on the Pod", Duration.ofSeconds(60), () -> readyIs("etcd-3", "True"));
        Poll.until(
            "the watch saw it",
            Duration.ofSeconds(10),
            () -> "True".equals(field(history.get(history.size() - 1), "ready", "status")));

        List<JsonArray> ours =
            history.stream().filter(h -> condition(h, PREFIX + "ready") != null).toList();
        JsonArray first = ours.get(0);
        for (String name : List.of("ready", "voting-member", "in-sync", "alarms-clear")) {
          assertThat(field(first, name, "status")).as(name).isEqualTo("False");
          assertThat(field(first, name, "reason")).as(name).isEqualTo("Starting");
        }
        List<String> voting = new ArrayList<>();
        for (JsonArray h : ours) {
          String reason = field(h, "voting-member", "reason");
          if (voting.isEmpty() || !voting.get(voting.size() - 1).equals(reason)) {
            voting.add(reason);
          }
        }
        System.out.printf("voting-member reasons %s in %d versions%n", voting, ours.size());
        assertThat(List.of("Starting", "NotStarted", "Learner", "Voter"))
            .containsSubsequence(voting);
        assertThat(voting).startsWith("Starting").endsWith("Voter").contains("Learner");
        for (int i = 1; i < ours.size(); i++) {
          String before = field(ours.get(i - 1), "voting-member", "status");
          String after = field(ours.get(i), "voting-member", "status");
          if (before.equals(after)) {
            assertThat(field(ours.get(i), "voting-member", "lastTransitionTime"))
                .as("lastTransitionTime moves only on a status flip")
                .isEqualTo(field(ours.get(i - 1), "voting-member", "lastTransitionTime"));
          }
        }
        JsonArray now = pods.conditions("etcd-3");
        assertThat(field(now, "ready", "observedGeneration")).isEqualTo("1");
        assertThat(foreign(now))
            .as("the kubelet's and others' conditions untouched")
            .isEqualTo(foreignBefore);
        assertThat(
                requests("patch", "status").stream()
                    .map(a -> a.getAsJsonObject("requestObject").toString())
                    .filter(
                        b ->
                            b.contains("\"type\":\"Ready\"")
                                || b.contains("\"type\":\"ContainersReady\"")))
            .as("never a patch of Ready or ContainersReady")
            .isEmpty();
        for (JsonObject a : requests("patch", "status")) {
          JsonObject body = a.getAsJsonObject("requestObject");
          assertThat(body.keySet())
              .as("a patch carries metadata and status only")
              .containsOnly("metadata", "status");
          assertThat(body.getAsJsonObject("metadata").keySet()).containsOnly("uid");
          assertThat(body.getAsJsonObject("metadata").get("uid").getAsString())
              .as("the UID precondition")
              .isEqualTo(uid);
          assertThat(body.getAsJsonObject("status").keySet()).containsOnly("conditions");
          for (JsonElement c : body.getAsJsonObject("status").getAsJsonArray("conditions")) {
            JsonObject o = c.getAsJsonObject();
            assertThat(o.get("type").getAsString()).as("only our conditions").startsWith(PREFIX);
            assertThat(o.keySet())
                .as("every field of each condition: a merge by type keeps a field left out")
                .contains("type", "status", "reason", "message", "lastTransitionTime");
          }
        }
        // The body above keeps the others' conditions only as a strategic merge patch (entries
        // merged by type): the same body as a JSON merge patch replaces the whole list. So the
        // "untouched" assertion above fails for any other patch type the agent might send.
        String probe = "etcd-3-merge-probe";
        pods.createPod(probe);
        pods.seedForeignConditions(probe);
        JsonObject last =
            requests("patch", "status")
                .get(requests("patch", "status").size() - 1)
                .getAsJsonObject("requestObject")
                .deepCopy();
        last.getAsJsonObject("metadata").addProperty("uid", pods.uid(probe));
        assertThat(
                kube.admin()
                    .patch(
                        "/api/v1/namespaces/" + pods.namespace() + "/pods/" + probe + "/status",
                        "application/merge-patch+json",
                        last.toString())
                    .ok())
            .isTrue();
        assertThat(foreign(pods.conditions(probe)))
            .as("a JSON merge patch of the agent's body wipes the others' conditions")
            .isEmpty();

        Poll.until(
            "events JoinedAsLearner and Promoted",
            Duration.ofSeconds(10),
            () -> pods.eventReasons().containsAll(List.of("JoinedAsLearner", "Promoted")));
        for (JsonObject e : pods.events()) {
          assertThat(e.getAsJsonObject("involvedObject").get("uid").getAsString()).isEqualTo(uid);
        }
        assertThat(pods.eventReasons().stream().filter("Promoted"::equals)).hasSize(1);

        long before = requests("patch", "status").size();
        long seq = sequence(agent);
        Poll.until("ten more polls", Duration.ofSeconds(20), () -> sequence(agent) >= seq + 10);
        assertThat(requests("patch", "status"))
            .as("no patch in a steady state")
            .hasSize((int) before);
      }
    }
  }

  /** Conditions that are not ours, in the server's order. */
  private static JsonArray foreign(JsonArray conditions) {
    JsonArray out = new JsonArray();
    for (JsonElement e : conditions) {
      if (!e.getAsJsonObject().get("type").getAsString().startsWith(PREFIX)) {
        out.add(e);
      }
    }
    return out;
  }

  private static long sequence(InProcessAgent agent) {
    String body = agent.get("/status").body();
    return Long.parseLong(body.replaceAll("(?s).*\"sequence\":(\\d+).*", "$1"));
  }

  @Test
  void aHungOrStoppedApiServerNeitherSlowsReadinessNorLosesAState() {
    String uid = pods.createPod("etcd-0");
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 3);
        InProcessAgent agent = agent(cluster.member(0), "etcd-0", podToken("etcd-0", uid))) {
      Poll.until("ready True on the Pod", Duration.ofSeconds(30), () -> readyIs("etcd-0", "True"));

      // A hung API server (SIGSTOP: connections accepted by the kernel, never answered).
      Processes.signal(kube.apiServer(), "STOP");
      try {
        cluster.member(0).kill();
        long slowest = 0;
        long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        while (System.nanoTime() < until) {
          long t = System.nanoTime();
          agent.get("/readyz");
          slowest = Math.max(slowest, System.nanoTime() - t);
        }
        assertThat(Duration.ofNanos(slowest))
            .as("/readyz while the API server hangs")
            .isLessThan(Duration.ofMillis(500));
        assertThat(agent.get("/readyz").status()).isEqualTo(503);
        Poll.until(
            "a write pending while the API server hangs",
            Duration.ofSeconds(10),
            () -> agent.get("/status").body().contains("\"pending\":true"));
      } finally {
        Processes.signal(kube.apiServer(), "CONT");
      }
      Poll.until(
          "ready False on the Pod once the API server answers",
          Duration.ofSeconds(40),
          () -> readyIs("etcd-0", "False"));
      assertThat(field(pods.conditions("etcd-0"), "ready", "reason"))
          .as("a killed member refuses or, while gRPC reconnects, times out")
          .isIn("Unreachable", "Timeout");

      // The API server stopped while the member comes back.
      kube.stopApiServer();
      try {
        cluster.member(0).restart();
        Poll.until(
            "/readyz 200 while the API server is down",
            Duration.ofSeconds(30),
            () -> agent.get("/readyz").status() == 200);
        assertThat(agent.get("/status").body()).contains("\"pending\":true");
      } finally {
        kube.startApiServer();
      }
      Poll.until(
          "ready True once the API server is back",
          Duration.ofSeconds(60),
          () -> readyIs("etcd-0", "True"));
      Poll.until(
          "nothing pending",
          Duration.ofSeconds(10),
          () -> agent.get("/status").body().contains("\"pending\":false"));
      assertThat(agent.get("/metrics").body())
          .contains("etcd_member_agent_kube_patches_total{result=\"retry\"}");
    }
  }

  @Test
  void removedConditionsAreRestoredAndAReplacedPodIsWrittenAfresh() {
    String firstUid = pods.createPod("etcd-1");
    // Bound to a Secret, not to the Pod: a Pod-bound token dies with its Pod (see below).
    String secretUid = pods.createSecret("agent-token");
    Path token =
        pods.tokenFile(dir.resolve("token"), KubePods.boundTo("Secret", "agent-token", secretUid));
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 3);
        InProcessAgent agent = agent(cluster.member(1), "etcd-1", token, "--resync-interval=2s")) {
      Poll.until("ready True on the Pod", Duration.ofSeconds(30), () -> readyIs("etcd-1", "True"));

      removeCondition("etcd-1", PREFIX + "ready");
      assertThat(condition(pods.conditions("etcd-1"), PREFIX + "ready")).isNull();
      Poll.until(
          "the removed condition restored by the resync",
          Duration.ofSeconds(15),
          () -> readyIs("etcd-1", "True"));

      pods.deletePod("etcd-1");
      String newUid = pods.createPod("etcd-1");
      cluster.member(1).kill();
      Poll.until(
          "conditions on the new Pod", Duration.ofSeconds(30), () -> readyIs("etcd-1", "False"));
      assertThat(requests("patch", "status"))
          .as("the patch meant for the old Pod refused: its metadata.uid is immutable (422)")
          .anyMatch(
              a ->
                  code(a) == 422
                      && a.getAsJsonObject("requestObject").toString().contains(firstUid));
      assertThat(pods.uid("etcd-1")).isEqualTo(newUid);
      assertThat(agent.get("/status").body()).contains(newUid);
      assertThat(requests("patch", "status"))
          .as("the agent names itself in the audit log")
          .isNotEmpty()
          .allSatisfy(
              a -> assertThat(a.get("userAgent").getAsString()).startsWith("etcd-member-agent/"));
      assertThat(pods.pod("etcd-1").getAsJsonObject("metadata").get("managedFields").toString())
          .as("the server takes the field manager from the User-Agent")
          .contains("\"manager\":\"etcd-member-agent\"");
    }
  }

  @Test
  void aRevokedTokenIsReplacedOnDiskAndTheAgentCarriesOn() {
    pods.createPod("etcd-2");
    String secretUid = pods.createSecret("token-a");
    Path token =
        pods.tokenFile(dir.resolve("token"), KubePods.boundTo("Secret", "token-a", secretUid));
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 3);
        InProcessAgent agent = agent(cluster.member(2), "etcd-2", token, "--resync-interval=2s")) {
      Poll.until("ready True on the Pod", Duration.ofSeconds(30), () -> readyIs("etcd-2", "True"));

      // Deleting the Secret the token is bound to revokes it (the API server caches a token's
      // verdict for a few seconds): the agent's next resync read is refused.
      pods.deleteSecret("token-a");
      Poll.until(
          "the agent refused with 401",
          Duration.ofSeconds(30),
          () -> agent.get("/status").body().contains("401: Unauthorized"));
      removeCondition("etcd-2", PREFIX + "ready");
      long seq = sequence(agent);
      Poll.until("five more polls", Duration.ofSeconds(20), () -> sequence(agent) >= seq + 5);
      assertThat(condition(pods.conditions("etcd-2"), PREFIX + "ready")).isNull();
      assertThat(agent.get("/readyz").status())
          .as("readiness does not depend on the API")
          .isEqualTo(200);

      String next = pods.createSecret("token-b");
      pods.tokenFile(token, KubePods.boundTo("Secret", "token-b", next));
      Poll.until(
          "the condition restored with the rotated token",
          Duration.ofSeconds(30),
          () -> readyIs("etcd-2", "True"));
    }
  }

  @Test
  void aRoleWithoutEventsCreateStillGetsTheConditionsAndTheAgentSaysWhatWasForbidden() {
    String uid = pods.createPod("etcd-0");
    JsonObject role =
        kube.admin()
            .getJson(
                "/apis/rbac.authorization.k8s.io/v1/namespaces/"
                    + pods.namespace()
                    + "/roles/"
                    + pods.role());
    JsonArray rules = new JsonArray();
    for (JsonElement r : role.getAsJsonArray("rules")) {
      if (!r.getAsJsonObject().getAsJsonArray("resources").toString().contains("\"events\"")) {
        rules.add(r);
      }
    }
    assertThat(rules.size())
        .as("the chart's Role minus its events rule")
        .isEqualTo(role.getAsJsonArray("rules").size() - 1);
    role.add("rules", rules);
    assertThat(
            kube.admin()
                .put(
                    "/apis/rbac.authorization.k8s.io/v1/namespaces/"
                        + pods.namespace()
                        + "/roles/"
                        + pods.role(),
                    role.toString())
                .ok())
        .isTrue();
    int port = FreePorts.next();
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 3);
        AgentProcess agent =
            AgentProcess.start(
                port,
                Map.of(),
                "run",
                "--http-host=127.0.0.1",
                "--http-port=" + port,
                "--etcd-endpoint=" + cluster.member(0).clientUrl(),
                "--poll-interval=500ms",
                "--kube=on",
                "--kubeconfig="
                    + kube.tokenKubeconfig(
                        dir.resolve("kubeconfig"), kube.url(), podToken("etcd-0", uid)),
                "--pod-name=etcd-0",
                "--pod-namespace=" + pods.namespace(),
                "--down-event-after=2s")) {
      Poll.until("ready True on the Pod", Duration.ofSeconds(60), () -> readyIs("etcd-0", "True"));
      cluster.member(0).kill();
      Poll.until(
          "ready False on the Pod", Duration.ofSeconds(30), () -> readyIs("etcd-0", "False"));
      Poll.until(
          "LocalMemberDown refused too",
          Duration.ofSeconds(30),
          () -> requests("create", "").size() >= 2);
      cluster.member(0).restart();
      Poll.until("ready True again", Duration.ofSeconds(30), () -> readyIs("etcd-0", "True"));
      Poll.until(
          "the refusal in /status",
          Duration.ofSeconds(10),
          () -> Http.get(port, "/status").body().contains("\"events create\""));
      assertThat(Http.get(port, "/status").body())
          .contains("cannot create resource \\\"events\\\"");
      assertThat(requests("create", "")).allMatch(a -> code(a) == 403);
      assertThat(pods.events()).isEmpty();
      List<String> said = agent.output().lines().filter(l -> l.contains("kube-refused")).toList();
      assertThat(said).as("said once: %s", agent.output()).hasSize(1);
      assertThat(said.get(0)).contains("events create", "forbidden");
    }
  }

  private void removeCondition(String pod, String type) {
    JsonArray conditions = pods.conditions(pod);
    for (int i = 0; i < conditions.size(); i++) {
      if (conditions.get(i).getAsJsonObject().get("type").getAsString().equals(type)) {
        String patch =
            "[{\"op\":\"test\",\"path\":\"/status/conditions/%d/type\",\"value\":\"%s\"},{\"op\":\"remove\",\"path\":\"/status/conditions/%d\"}]"
                .formatted(i, type, i);
        var answer =
            kube.admin()
                .patch(
                    "/api/v1/namespaces/" + pods.namespace() + "/pods/" + pod + "/status",
                    "application/json-patch+json",
                    patch);
        assertThat(answer.ok()).as("remove %s: %s", type, answer).isTrue();
        return;
      }
    }
    throw new AssertionError(type + " not on " + pod);
  }
}
