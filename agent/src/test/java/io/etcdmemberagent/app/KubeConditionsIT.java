package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.etcdmemberagent.kube.FakeKubeApi;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/** The agent (real etcd) publishing Pod conditions and events to the Kubernetes API stand-in. */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#versions")
class KubeConditionsIT {

  @Parameter String version;

  static final String NS = "etcd";
  static final String PREFIX = "etcd-member-agent.io/";
  final FakeKubeApi api = new FakeKubeApi();
  @TempDir Path dir;

  @AfterEach
  void close() {
    api.close();
  }

  private InProcessAgent agent(EtcdMember member, String pod, String... extra) {
    List<String> flags =
        new ArrayList<>(
            List.of(
                "--etcd-endpoint=" + member.clientUrl(),
                "--poll-interval=500ms",
                "--learner-poll-interval=200ms",
                "--etcd-timeout=1s",
                "--kube=on",
                "--kubeconfig=" + api.writeKubeconfig(dir),
                "--pod-name=" + pod,
                "--pod-namespace=" + NS,
                "--kube-timeout=1s"));
    flags.addAll(List.of(extra));
    return InProcessAgent.start(flags.toArray(String[]::new));
  }

  private JsonObject condition(JsonArray conditions, String name) {
    for (JsonElement e : conditions) {
      if (e.getAsJsonObject().get("type").getAsString().equals(PREFIX + name)) {
        return e.getAsJsonObject();
      }
    }
    return null;
  }

  private String field(JsonArray conditions, String name, String field) {
    JsonObject c = condition(conditions, name);
    return c == null || !c.has(field) ? null : c.get(field).getAsString();
  }

  private boolean readyIs(String pod, String status) {
    return status.equals(field(api.conditions(NS, pod), "ready", "status"));
  }

  private long patches() {
    return api.requests().stream().filter(r -> r.method().equals("PATCH")).count();
  }

  @Test
  void aLearnerJoiningAndPromotedGivesTheExactConditionSequence() {
    api.createPod(NS, "etcd-3");
    try (EtcdCluster cluster = EtcdCluster.start(version, 3)) {
      EtcdMember learner = cluster.addMember(true);
      try (InProcessAgent agent =
          agent(
              learner,
              "etcd-3",
              "--cluster-endpoints=" + cluster.clientUrls(),
              "--peer-urls=" + learner.peerUrl())) {
        Poll.until(
            "the agent's first patch",
            Duration.ofSeconds(20),
            () -> !api.conditionHistory().isEmpty());
        cluster.startJoined(learner);
        Poll.until(
            "ready True on the Pod", Duration.ofSeconds(60), () -> readyIs("etcd-3", "True"));

        List<JsonArray> history = api.conditionHistory();
        JsonArray first = history.get(0);
        for (String name : List.of("ready", "voting-member", "in-sync", "alarms-clear")) {
          assertThat(field(first, name, "status")).as(name).isEqualTo("False");
          assertThat(field(first, name, "reason")).as(name).isEqualTo("Starting");
        }
        List<String> voting = new ArrayList<>();
        for (JsonArray h : history) {
          String reason = field(h, "voting-member", "reason");
          if (voting.isEmpty() || !voting.get(voting.size() - 1).equals(reason)) {
            voting.add(reason);
          }
        }
        System.out.printf(
            "etcd %s: voting-member reasons %s in %d patches%n", version, voting, history.size());
        assertThat(List.of("Starting", "NotStarted", "Learner", "Voter"))
            .containsSubsequence(voting);
        assertThat(voting).startsWith("Starting").endsWith("Voter").contains("Learner");

        for (int i = 1; i < history.size(); i++) {
          assertThat(ours(history.get(i)))
              .as("patch %d changes something of ours", i)
              .isNotEqualTo(ours(history.get(i - 1)));
          String before = field(history.get(i - 1), "voting-member", "status");
          String after = field(history.get(i), "voting-member", "status");
          if (before.equals(after)) {
            assertThat(field(history.get(i), "voting-member", "lastTransitionTime"))
                .as("lastTransitionTime moves only on a status flip")
                .isEqualTo(field(history.get(i - 1), "voting-member", "lastTransitionTime"));
          }
        }
        assertThat(field(api.conditions(NS, "etcd-3"), "ready", "observedGeneration"))
            .isEqualTo("1");
        assertThat(condition(api.conditions(NS, "etcd-3"), "Ready")).isNull();
        assertThat(api.conditions(NS, "etcd-3").toString())
            .contains("\"type\":\"Ready\"", "\"type\":\"ContainersReady\"");
        Poll.until(
            "events JoinedAsLearner and Promoted",
            Duration.ofSeconds(10),
            () ->
                api.events().stream()
                    .map(e -> e.get("reason").getAsString())
                    .toList()
                    .containsAll(List.of("JoinedAsLearner", "Promoted")));

        long before = patches();
        long seq = sequence(agent);
        Poll.until("ten more polls", Duration.ofSeconds(20), () -> sequence(agent) >= seq + 10);
        assertThat(patches()).as("no patch in a steady state").isEqualTo(before);
      }
    }
  }

  private static String ours(JsonArray conditions) {
    List<String> out = new ArrayList<>();
    for (JsonElement e : conditions) {
      JsonObject c = e.getAsJsonObject();
      if (c.get("type").getAsString().startsWith(PREFIX)) {
        out.add(
            c.get("type").getAsString()
                + "="
                + c.get("status").getAsString()
                + "/"
                + c.get("reason").getAsString()
                + "/"
                + c.get("message").getAsString());
      }
    }
    return String.join(";", out);
  }

  private static long sequence(InProcessAgent agent) {
    String body = agent.get("/status").body();
    return Long.parseLong(body.replaceAll("(?s).*\"sequence\":(\\d+).*", "$1"));
  }

  @Test
  void apiFaultsLoseNothingAndRetryAfterIsHonoured() {
    api.createPod(NS, "etcd-0");
    try (EtcdCluster cluster = EtcdCluster.start(version, 3);
        InProcessAgent agent = agent(cluster.member(0), "etcd-0")) {
      Poll.until("ready True on the Pod", Duration.ofSeconds(30), () -> readyIs("etcd-0", "True"));

      // A hanging API server (longer than --kube-timeout) and a 500 while the member goes down.
      api.addFault(new FakeKubeApi.Fault(500, 0, Duration.ofSeconds(3)));
      api.addFault(new FakeKubeApi.Fault(500, 0, Duration.ZERO));
      cluster.member(0).kill();
      long slowest = 0;
      long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
      while (System.nanoTime() < until) {
        long t = System.nanoTime();
        agent.get("/readyz");
        slowest = Math.max(slowest, System.nanoTime() - t);
      }
      assertThat(Duration.ofNanos(slowest))
          .as("/readyz while the API hangs")
          .isLessThan(Duration.ofMillis(500));
      assertThat(agent.get("/readyz").status()).isEqualTo(503);
      Poll.until(
          "ready False on the Pod after the faults",
          Duration.ofSeconds(30),
          () -> readyIs("etcd-0", "False"));
      assertThat(field(api.conditions(NS, "etcd-0"), "ready", "reason")).isEqualTo("Unreachable");

      // 429 with Retry-After: 2 while the member comes back.
      api.addFault(new FakeKubeApi.Fault(429, 2, Duration.ZERO));
      cluster.member(0).restart();
      Poll.until(
          "ready True on the Pod after the 429",
          Duration.ofSeconds(30),
          () -> readyIs("etcd-0", "True"));
      List<FakeKubeApi.Request> all = api.requests();
      FakeKubeApi.Request throttled =
          all.stream().filter(r -> r.status() == 429).findFirst().orElseThrow();
      FakeKubeApi.Request next =
          all.stream()
              .filter(r -> r.atNanos() > throttled.atNanos() && !r.delayed())
              .findFirst()
              .orElseThrow();
      assertThat(Duration.ofNanos(next.atNanos() - throttled.atNanos()))
          .as(
              "the next call comes after Retry-After: 2: %s",
              all.stream()
                  .map(
                      r ->
                          r.method()
                              + " "
                              + r.path().replaceAll(".*/", "")
                              + " "
                              + r.status()
                              + " "
                              + r.atNanos() / 1_000_000)
                  .toList())
          .isGreaterThanOrEqualTo(Duration.ofSeconds(2));

      cluster.member(0).kill();
      Poll.until(
          "ready False on the Pod", Duration.ofSeconds(30), () -> readyIs("etcd-0", "False"));
      api.down();
      cluster.member(0).restart();
      Poll.until(
          "/readyz 200 while the API is down",
          Duration.ofSeconds(30),
          () -> agent.get("/readyz").status() == 200);
      assertThat(agent.get("/status").body()).contains("\"pending\":true");
      api.up();
      Poll.until(
          "ready True once the API is back",
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
  void aReplacedPodAndRemovedConditionsAreWrittenAgain() {
    api.createPod(NS, "etcd-1");
    try (EtcdCluster cluster = EtcdCluster.start(version, 3);
        InProcessAgent agent = agent(cluster.member(1), "etcd-1", "--resync-interval=2s")) {
      Poll.until("ready True on the Pod", Duration.ofSeconds(30), () -> readyIs("etcd-1", "True"));

      api.removeCondition(NS, "etcd-1", PREFIX + "ready");
      Poll.until(
          "the removed condition restored by the resync",
          Duration.ofSeconds(15),
          () -> readyIs("etcd-1", "True"));

      String newUid = api.createPod(NS, "etcd-1");
      cluster.member(1).kill();
      Poll.until(
          "conditions on the new Pod", Duration.ofSeconds(30), () -> readyIs("etcd-1", "False"));
      assertThat(api.requests()).anyMatch(r -> r.status() == 409);
      assertThat(api.pod(NS, "etcd-1").getAsJsonObject("metadata").get("uid").getAsString())
          .isEqualTo(newUid);
      assertThat(agent.get("/status").body()).contains(newUid);
    }
  }
}
