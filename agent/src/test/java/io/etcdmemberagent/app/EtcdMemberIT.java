package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.etcdmemberagent.app.join.JoinCommand;
import io.etcdmemberagent.config.JoinConfig;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import io.etcdmemberagent.testing.KubeRest;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The EtcdMember resource on a real kube-apiserver: the CRD as shipped (deploy/crds, the same file
 * as the chart's crds/), objects written by the agent as the chart's ServiceAccount with the
 * chart's Role, read back by the test's admin and by Debian's kubectl; what the agent sent is in
 * the server's audit log.
 */
class EtcdMemberIT {

  static final String VERSION = EtcdBinaries.primary();
  static final String GROUP = "etcd-member-agent.io";
  static final Path CRD = Path.of("..", "deploy", "crds", "etcdmembers.etcd-member-agent.io.yaml");
  static final AtomicInteger NAMESPACES = new AtomicInteger();

  @TempDir static Path shared;
  static KubeControlPlane kube;

  @TempDir Path dir;
  KubePods pods;

  @BeforeAll
  static void controlPlane() {
    kube = KubeControlPlane.start(shared.resolve("kube"));
    kube.kubectl("apply", "--server-side", "-f", CRD.toString());
    kube.kubectl(
        "wait", "--for=condition=Established", "--timeout=30s", "crd/etcdmembers." + GROUP);
  }

  @AfterAll
  static void stop() {
    if (kube != null) {
      kube.close();
    }
  }

  @BeforeEach
  void namespace() {
    pods = new KubePods(kube, "members-" + NAMESPACES.incrementAndGet(), "etcd").withChartRbac(dir);
  }

  private String path() {
    return "/apis/" + GROUP + "/v1alpha1/namespaces/" + pods.namespace() + "/etcdmembers";
  }

  private KubeRest.Answer object(String name) {
    return kube.admin().get(path() + "/" + name);
  }

  private JsonObject status(String name) {
    KubeRest.Answer a = object(name);
    if (!a.ok()) {
      return new JsonObject();
    }
    JsonObject o = a.json();
    return o.has("status") ? o.getAsJsonObject("status") : new JsonObject();
  }

  private static String text(JsonObject o, String field) {
    return o.has(field) && !o.get(field).isJsonNull() ? o.get(field).getAsString() : "";
  }

  private static List<String> reasons(JsonObject status) {
    List<String> out = new ArrayList<>();
    if (status.has("transitions")) {
      for (JsonElement t : status.getAsJsonArray("transitions")) {
        out.add(t.getAsJsonObject().get("reason").getAsString());
      }
    }
    return out;
  }

  private InProcessAgent agent(String pod, EtcdMember member, String... extra) {
    List<String> flags = new ArrayList<>(pods.agentFlagsFor(pod, dir));
    flags.addAll(
        List.of(
            "--etcd-endpoint=" + member.clientUrl(),
            "--poll-interval=500ms",
            "--learner-poll-interval=200ms",
            "--etcd-timeout=1s",
            "--kube-timeout=2s"));
    flags.addAll(List.of(extra));
    return InProcessAgent.start(flags.toArray(String[]::new));
  }

  /** The agent's status patches of EtcdMembers, as the server's audit log has them. */
  private List<JsonObject> memberStatusPatches() {
    String user = "system:serviceaccount:" + pods.namespace() + ":" + pods.serviceAccount();
    return kube.audit().stream()
        .filter(a -> a.getAsJsonObject("user").get("username").getAsString().equals(user))
        .filter(a -> a.get("verb").getAsString().equals("patch"))
        .filter(
            a -> {
              JsonObject ref = a.getAsJsonObject("objectRef");
              return text(ref, "resource").equals("etcdmembers")
                  && text(ref, "subresource").equals("status");
            })
        .toList();
  }

  @Test
  void theCrdIsServedAndItsSchemaRefusesWhatItDoesNotDescribe() {
    String object =
        """
        {"apiVersion":"%s/v1alpha1","kind":"EtcdMember","metadata":{"name":"etcd-9"},"spec":{}}
        """
            .formatted(GROUP);
    assertThat(kube.admin().post(path(), object).ok()).isTrue();
    String status = path() + "/etcd-9/status";
    Map<String, String> refused =
        Map.of(
            "{\"status\":{\"role\":\"Boss\"}}",
            "status.role",
            "{\"status\":{\"memberID\":\"XYZ\"}}",
            "status.memberID",
            "{\"status\":{\"lagEntries\":-1}}",
            "status.lagEntries",
            "{\"status\":{\"conditions\":[{\"type\":\"ready\",\"status\":\"Maybe\","
                + "\"reason\":\"R\",\"message\":\"\",\"lastTransitionTime\":"
                + "\"2026-12-04T10:00:00Z\"}]}}",
            "status.conditions[0].status",
            "{\"status\":{\"join\":{\"decision\":\"Guessed\"}}}",
            "status.join.decision");
    for (Map.Entry<String, String> e : refused.entrySet()) {
      KubeRest.Answer a = kube.admin().patch(status, "application/merge-patch+json", e.getKey());
      assertThat(a.status()).as("%s: %s", e.getKey(), a.body()).isEqualTo(422);
      assertThat(a.body()).contains(e.getValue());
    }
    StringBuilder many = new StringBuilder("{\"status\":{\"transitions\":[");
    for (int i = 0; i < 101; i++) {
      many.append(i == 0 ? "" : ",")
          .append("{\"role\":\"Unknown\",\"reason\":\"MemberUnreachable\",")
          .append("\"transitionTime\":\"2026-12-04T10:00:00Z\"}");
    }
    many.append("]}}");
    KubeRest.Answer tooMany =
        kube.admin().patch(status, "application/merge-patch+json", many.toString());
    assertThat(tooMany.status()).isEqualTo(422);
    assertThat(tooMany.body()).contains("Too many");
    KubeRest.Answer good =
        kube.admin()
            .patch(
                status,
                "application/merge-patch+json",
                "{\"status\":{\"role\":\"Leader\",\"memberID\":\"a1\",\"ready\":true}}");
    assertThat(good.ok()).as(good.body()).isTrue();
    assertThat(kube.kubectl("get", "em", "-n", pods.namespace())).contains("etcd-9", "Leader");
  }

  @Test
  void aLearnerJoinsIsPromotedLeadsAndFollowsAndItAllIsInTheTransitions() throws Exception {
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 1)) {
      EtcdMember learner = cluster.addMember(true);
      try (InProcessAgent agent =
          agent(
              "etcd-1",
              learner,
              "--cluster-endpoints=" + cluster.clientUrls(),
              "--peer-urls=" + learner.peerUrl())) {
        Poll.until(
            "the EtcdMember created",
            Duration.ofSeconds(20),
            () -> !text(status("etcd-1"), "role").isEmpty());
        cluster.startJoined(learner);
        Poll.until(
            "promoted: a Follower",
            Duration.ofSeconds(60),
            () -> text(status("etcd-1"), "role").equals("Follower"));
        long self = cluster.client().memberId(learner.clientUrl());
        long first = cluster.client().memberId(cluster.member(0).clientUrl());
        cluster.client().moveLeader(cluster.member(0).clientUrl(), self);
        Poll.until(
            "the leader",
            Duration.ofSeconds(30),
            () -> text(status("etcd-1"), "role").equals("Leader"));
        cluster.client().moveLeader(learner.clientUrl(), first);
        Poll.until(
            "a follower again",
            Duration.ofSeconds(30),
            () -> text(status("etcd-1"), "role").equals("Follower"));

        JsonObject s = status("etcd-1");
        System.out.println("EtcdMember status: " + s);
        assertThat(reasons(s))
            .containsSubsequence(
                "JoinedAsLearner",
                "PromotedAsVotingMember",
                "GainedClusterLeadership",
                "LostClusterLeadership");
        assertThat(text(s, "memberID")).isEqualTo(Long.toHexString(self));
        assertThat(text(s, "leaderID")).isEqualTo(Long.toHexString(first));
        assertThat(text(s, "clusterID")).isNotEmpty();
        assertThat(text(s, "name")).isEqualTo(learner.name());
        assertThat(text(s, "etcdVersion")).startsWith(VERSION + ".");
        assertThat(text(s, "storageVersion")).isNotEmpty();
        assertThat(s.get("learner").getAsBoolean()).isFalse();
        assertThat(s.get("started").getAsBoolean()).isTrue();
        assertThat(s.get("ready").getAsBoolean()).isTrue();
        assertThat(s.getAsJsonArray("peerURLs").toString()).contains(learner.peerUrl());
        assertThat(text(s.getAsJsonObject("peerTLS"), "reason")).isEqualTo("PlainHttpPeerUrl");
        assertThat(s.get("dbSizeBytes").getAsLong()).isPositive();
        assertThat(s.get("quotaUsedPercent").getAsLong()).isNotNegative();
        assertThat(KubePods.field(s.getAsJsonArray("conditions"), "ready", "status"))
            .as("the same conditions as the Pod, by their short names")
            .isNull();
        assertThat(conditionStatus(s, "ready")).isEqualTo("True");
        assertThat(conditionStatus(s, "voting-member")).isEqualTo("True");
        JsonObject meta = object("etcd-1").json().getAsJsonObject("metadata");
        assertThat(meta.has("ownerReferences"))
            .as("a Pod without a controller: an object without an owner")
            .isFalse();
        assertThat(agent.get("/status").body()).contains("\"memberResource\"");
      }
    }
  }

  private static String conditionStatus(JsonObject status, String type) {
    for (JsonElement c : status.getAsJsonArray("conditions")) {
      if (c.getAsJsonObject().get("type").getAsString().equals(type)) {
        return c.getAsJsonObject().get("status").getAsString();
      }
    }
    return null;
  }

  @Test
  void threeMembersAgreeOnTheLeaderKubectlShowsThemAndASteadyFleetWritesNothing() {
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 3)) {
      List<InProcessAgent> agents = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          agents.add(agent("etcd-" + i, cluster.member(i), "--resync-interval=5m"));
        }
        Poll.until(
            "three objects, one leader, every leaderID its memberID",
            Duration.ofSeconds(30),
            () -> {
              Set<String> leaders = new TreeSet<>();
              List<String> leaderIds = new ArrayList<>();
              for (int i = 0; i < 3; i++) {
                JsonObject s = status("etcd-" + i);
                if (text(s, "role").equals("Leader")) {
                  leaders.add(text(s, "memberID"));
                }
                leaderIds.add(text(s, "leaderID"));
                if (!s.has("ready") || !s.get("ready").getAsBoolean()) {
                  return false;
                }
              }
              return leaders.size() == 1
                  && leaderIds.stream().allMatch(leaders.iterator().next()::equals);
            });
        String table = kube.kubectl("get", "etcdmembers", "-n", pods.namespace());
        System.out.println(table);
        List<String> lines = table.lines().toList();
        assertThat(lines.get(0).split("\\s{2,}"))
            .containsExactly(
                "NAME", "ROLE", "READY", "LAG", "DB SIZE", "QUOTA %", "PEER TLS", "DISK", "AGE");
        assertThat(lines).hasSize(4);
        assertThat(lines.stream().filter(l -> l.contains(" Leader "))).hasSize(1);
        assertThat(lines.stream().filter(l -> l.contains(" Follower "))).hasSize(2);
        assertThat(lines.subList(1, 4)).allMatch(l -> l.contains(" true ") && l.contains("KiB"));
        String wide = kube.kubectl("get", "em", "-o", "wide", "-n", pods.namespace());
        assertThat(wide.lines().findFirst().orElseThrow())
            .contains("MEMBER ID", "LEADER ID", "VERSION");

        Poll.until(
            "etcd's storage version settled on every member (3.6+ migrates it after start-up, a"
                + " real change each agent writes)",
            Duration.ofSeconds(30),
            () -> {
              for (int i = 0; i < 3; i++) {
                JsonObject s = status("etcd-" + i);
                String minor = text(s, "etcdVersion").replaceAll("^(\\d+\\.\\d+).*", "$1");
                if (!text(s, "storageVersion").equals(minor + ".0")) {
                  return false;
                }
              }
              return true;
            });
        Poll.until(
            "nothing left to write",
            Duration.ofSeconds(20),
            () ->
                agents.stream()
                    .allMatch(
                        a ->
                            a.get("/status")
                                .body()
                                .matches("(?s).*\"writes\":\\d+,\"pending\":false.*")));
        int before = memberStatusPatches().size();
        long seq = sequence(agents.get(0));
        Poll.until(
            "ten more polls", Duration.ofSeconds(20), () -> sequence(agents.get(0)) >= seq + 10);
        assertThat(memberStatusPatches())
            .as("no EtcdMember write between resyncs in a steady cluster")
            .hasSize(before);
        System.out.printf(
            "EtcdMember status writes for 3 members from start to steady: %d%n", before);
      } finally {
        agents.forEach(InProcessAgent::close);
      }
    }
  }

  private static long sequence(InProcessAgent agent) {
    String body = agent.get("/status").body();
    return Long.parseLong(body.replaceAll("(?s).*\"sequence\":(\\d+).*", "$1"));
  }

  @Test
  void theObjectSurvivesItsPodAndGoesWithItsStatefulSet() throws Exception {
    kube.startControllerManager("garbagecollector");
    String ns = pods.namespace();
    String sts =
        """
        {"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"etcd"},
         "spec":{"replicas":0,"serviceName":"etcd","selector":{"matchLabels":{"app":"etcd"}},
                 "template":{"metadata":{"labels":{"app":"etcd"}},
                             "spec":{"containers":[{"name":"etcd","image":"etcd"}]}}}}
        """;
    String stsUid =
        kube.admin()
            .postJson("/apis/apps/v1/namespaces/" + ns + "/statefulsets", sts)
            .getAsJsonObject("metadata")
            .get("uid")
            .getAsString();
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 1)) {
      String firstUid;
      try (InProcessAgent agent = ownedAgent(cluster, stsUid)) {
        Poll.until(
            "the EtcdMember of etcd-0",
            Duration.ofSeconds(20),
            () -> text(status("etcd-0"), "role").equals("Leader"));
        JsonObject meta = object("etcd-0").json().getAsJsonObject("metadata");
        firstUid = meta.get("uid").getAsString();
        JsonArray owners = meta.getAsJsonArray("ownerReferences");
        assertThat(owners).hasSize(1);
        JsonObject owner = owners.get(0).getAsJsonObject();
        assertThat(text(owner, "kind")).isEqualTo("StatefulSet");
        assertThat(text(owner, "uid")).isEqualTo(stsUid);
        assertThat(owner.has("controller") && owner.get("controller").getAsBoolean()).isFalse();
      }
      pods.deletePod("etcd-0");
      int before = reasons(status("etcd-0")).size();
      try (InProcessAgent agent = ownedAgent(cluster, stsUid)) {
        Poll.until(
            "the new Pod's agent wrote to the same object",
            Duration.ofSeconds(20),
            () -> writes(agent) >= 1);
        assertThat(object("etcd-0").json().getAsJsonObject("metadata").get("uid").getAsString())
            .as("the same object: it outlived the Pod")
            .isEqualTo(firstUid);
        assertThat(reasons(status("etcd-0")))
            .as("the history kept (a first sighting of the same role is no news)")
            .hasSize(before);
      }
      kube.kubectl("delete", "statefulset", "etcd", "-n", ns, "--wait=false");
      Poll.until(
          "the garbage collector removed the EtcdMember with its StatefulSet",
          Duration.ofSeconds(60),
          () -> object("etcd-0").status() == 404);
    }
  }

  private static long writes(InProcessAgent agent) {
    String body = agent.get("/status").body();
    return Long.parseLong(body.replaceAll("(?s).*\"writes\":(\\d+).*", "$1"));
  }

  /** The Pod etcd-0, controlled by the StatefulSet, and its agent. */
  private InProcessAgent ownedAgent(EtcdCluster cluster, String stsUid) {
    String pod =
        """
        {"apiVersion":"v1","kind":"Pod","metadata":{"name":"etcd-0","labels":{"app":"etcd"},
          "ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"etcd",
                              "uid":"%s","controller":true,"blockOwnerDeletion":true}]},
         "spec":{"serviceAccountName":"%s","automountServiceAccountToken":false,
                 "containers":[{"name":"etcd","image":"etcd"}]}}
        """
            .formatted(stsUid, pods.serviceAccount());
    String uid =
        kube.admin()
            .postJson("/api/v1/namespaces/" + pods.namespace() + "/pods", pod)
            .getAsJsonObject("metadata")
            .get("uid")
            .getAsString();
    Path token =
        pods.tokenFile(
            dir.resolve("etcd-0-" + uid + ".token"), KubePods.boundTo("Pod", "etcd-0", uid));
    return InProcessAgent.start(
        "--etcd-endpoint=" + cluster.member(0).clientUrl(),
        "--poll-interval=500ms",
        "--etcd-timeout=1s",
        "--kube=on",
        "--kubeconfig="
            + kube.tokenKubeconfig(dir.resolve("etcd-0-" + uid + ".kubeconfig"), kube.url(), token),
        "--pod-name=etcd-0",
        "--pod-namespace=" + pods.namespace());
  }

  @Test
  void withoutTheCrdOrThePermissionTheAgentSaysSoOnceAndTheConditionsStillArrive() {
    List<String> flags = new ArrayList<>(pods.agentFlagsFor("etcd-0", dir));
    int port = FreePorts.next();
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 1)) {
      List<String> args = new ArrayList<>(List.of("run", "--http-host=127.0.0.1"));
      args.add("--http-port=" + port);
      args.add("--etcd-endpoint=" + cluster.member(0).clientUrl());
      args.add("--poll-interval=500ms");
      args.add("--resync-interval=2s");
      args.addAll(flags);
      List<String> noCrd = new ArrayList<>(args);
      noCrd.add("--condition-prefix=etcd.example.com");
      noCrd.add("--member-resource=on");
      try (AgentProcess agent = AgentProcess.start(port, Map.of(), noCrd.toArray(String[]::new))) {
        Poll.until(
            "etcd.example.com/ready True on the Pod",
            Duration.ofSeconds(30),
            () ->
                "True"
                    .equals(
                        KubePods.field(
                            pods.conditions("etcd-0"), "ready", "status", "etcd.example.com/")));
        Poll.until(
            "the missing CRD in /status",
            Duration.ofSeconds(10),
            () -> Http.get(port, "/status").body().contains("etcdmembers discovery"));
        Poll.until(
            "two more looks at the CRD",
            Duration.ofSeconds(20),
            () -> discoveries("etcd.example.com") >= 3);
        List<String> said = agent.output().lines().filter(l -> l.contains("kube-refused")).toList();
        assertThat(said).as("said once: %s", agent.output()).hasSize(1);
        assertThat(said.get(0))
            .contains("etcdmembers.etcd.example.com/v1alpha1", "install its CRD");
      }

      withoutVerb("etcdmembers", "create");
      int second = FreePorts.next();
      args.set(args.indexOf("--http-port=" + port), "--http-port=" + second);
      try (AgentProcess agent = AgentProcess.start(second, Map.of(), args.toArray(String[]::new))) {
        Poll.until(
            "the refused create in /status",
            Duration.ofSeconds(30),
            () -> Http.get(second, "/status").body().contains("\"etcdmembers create\""));
        Poll.until(
            "ready True on the Pod",
            Duration.ofSeconds(30),
            () -> "True".equals(KubePods.field(pods.conditions("etcd-0"), "ready", "status")));
        List<String> said = agent.output().lines().filter(l -> l.contains("kube-refused")).toList();
        assertThat(said).as("said once: %s", agent.output()).hasSize(1);
        assertThat(said.get(0)).contains("etcdmembers create", "forbidden");
        assertThat(object("etcd-0").status()).isEqualTo(404);
      }
    }
  }

  /** How often the agent asked whether a group's EtcdMember is served (the audit log). */
  private long discoveries(String group) {
    String user = "system:serviceaccount:" + pods.namespace() + ":" + pods.serviceAccount();
    return kube.audit().stream()
        .filter(a -> a.getAsJsonObject("user").get("username").getAsString().equals(user))
        .filter(a -> text(a, "requestURI").startsWith("/apis/" + group + "/v1alpha1"))
        .count();
  }

  /** The chart's Role without one verb on one resource. */
  private void withoutVerb(String resource, String verb) {
    String rolePath =
        "/apis/rbac.authorization.k8s.io/v1/namespaces/"
            + pods.namespace()
            + "/roles/"
            + pods.role();
    JsonObject role = kube.admin().getJson(rolePath);
    int removed = 0;
    for (JsonElement r : role.getAsJsonArray("rules")) {
      JsonObject rule = r.getAsJsonObject();
      if (rule.getAsJsonArray("resources").toString().equals("[\"" + resource + "\"]")) {
        JsonArray verbs = new JsonArray();
        for (JsonElement v : rule.getAsJsonArray("verbs")) {
          if (!v.getAsString().equals(verb)) {
            verbs.add(v);
          }
        }
        removed += rule.getAsJsonArray("verbs").size() - verbs.size();
        rule.add("verbs", verbs);
      }
    }
    assertThat(removed).as("the chart's Role has %s %s", verb, resource).isEqualTo(1);
    assertThat(kube.admin().put(rolePath, role.toString()).ok()).isTrue();
  }

  @Test
  void joinRecordsItsDecisionInTheSameObject() throws Exception {
    List<String> flags = new ArrayList<>(pods.agentFlagsFor("etcd-1", dir));
    try (EtcdCluster cluster = EtcdCluster.start(VERSION, 1)) {
      EtcdMember next = cluster.newUnaddedMember();
      List<String> args =
          new ArrayList<>(
              List.of(
                  "--name=etcd-1",
                  "--peer-urls=" + next.peerUrl(),
                  "--cluster-endpoints=" + cluster.clientUrls(),
                  "--data-dir=" + dir.resolve("etcd-1-data"),
                  "--env-file=" + dir.resolve("etcd-1.env")));
      args.addAll(flags.stream().filter(f -> !f.startsWith("--pod-name=")).toList());
      assertThat(JoinCommand.execute(JoinConfig.parse(args, Map.of()))).isZero();
      JsonObject join = status("etcd-1").getAsJsonObject("join");
      assertThat(join).as("status.join").isNotNull();
      assertThat(text(join, "decision")).isEqualTo("AddedAsLearner");
      long learner =
          cluster.client().members(cluster.member(0).clientUrl()).stream()
              .filter(m -> m.getIsLearner())
              .findFirst()
              .orElseThrow()
              .getID();
      assertThat(text(join, "memberID")).isEqualTo(Long.toHexString(learner));
      assertThat(text(join, "message")).contains("added as learner");

      assertThat(JoinCommand.execute(JoinConfig.parse(args, Map.of())))
          .as("join again: the member is in the list, not started")
          .isZero();
      assertThat(text(status("etcd-1").getAsJsonObject("join"), "decision"))
          .isEqualTo("ReusedMember");
    }
  }
}
