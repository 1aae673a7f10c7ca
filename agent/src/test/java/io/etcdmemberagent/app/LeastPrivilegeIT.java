package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every verb of the chart's Role is used: with that one verb taken out of the Role, on a real
 * kube-apiserver, the agent meets the server's real 403 and names what it could not do, in {@code
 * /status} (and goes on with the rest). The agent runs as the chart's ServiceAccount with a token
 * bound to its Pod, which a StatefulSet owns (so the scale-down rule reads it).
 */
class LeastPrivilegeIT {

  static final Path CRD = Path.of("..", "deploy", "crds", "etcdmembers.etcd-member-agent.io.yaml");
  static final AtomicInteger NAMESPACES = new AtomicInteger();

  @TempDir static Path shared;
  static KubeControlPlane kube;
  static Process etcd;
  static String etcdUrl;

  @TempDir Path dir;

  @BeforeAll
  static void start() {
    kube = KubeControlPlane.start(shared.resolve("kube"));
    kube.kubectl("apply", "--server-side", "-f", CRD.toString());
    etcdUrl = "http://127.0.0.1:" + FreePorts.next();
    etcd =
        SingleEtcd.start(
            EtcdBinaries.primary(),
            "db-0",
            shared.resolve("etcd"),
            etcdUrl,
            shared.resolve("etcd.log"),
            "--unsafe-no-fsync");
  }

  @AfterAll
  static void stop() {
    if (etcd != null) {
      Processes.kill(etcd);
    }
    if (kube != null) {
      kube.close();
    }
  }

  /** Each rule of the Role, one verb at a time, and what the agent says without it. */
  static Stream<Arguments> verbs() {
    return Stream.of(
        Arguments.of("", "pods", "get", "\"pods get\""),
        Arguments.of("", "pods/status", "patch", "\"pods/status patch\""),
        Arguments.of("", "events", "create", "\"events create\""),
        Arguments.of("apps", "statefulsets", "get", "StatefulSetRefused"),
        Arguments.of("etcd-member-agent.io", "etcdmembers", "get", "\"etcdmembers get\""),
        Arguments.of("etcd-member-agent.io", "etcdmembers", "create", "\"etcdmembers create\""),
        Arguments.of(
            "etcd-member-agent.io", "etcdmembers/status", "patch", "\"etcdmembers/status patch\""));
  }

  @ParameterizedTest(name = "without {1} {2}")
  @MethodSource("verbs")
  void eachVerbOfTheRoleIsNeededAndItsAbsenceIsNamed(
      String group, String resource, String verb, String named) {
    String ns = "least-" + NAMESPACES.incrementAndGet();
    KubePods pods = new KubePods(kube, ns, "db").withChartRbac(dir);
    int rulesBefore = rules(pods).size();
    dropVerb(pods, group, resource, verb);
    assertThat(
            rules(pods).toString().contains("\"" + resource + "\"")
                && rulesBefore == rules(pods).size())
        .as("only the verb went; a rule with other verbs stays")
        .isEqualTo(resource.equals("etcdmembers"));
    List<String> flags = podOwnedByAStatefulSet(pods, ns);
    // a silent local member makes the agent post LocalMemberDown: the events verb is used
    String endpoint = resource.equals("events") ? "http://127.0.0.1:" + FreePorts.next() : etcdUrl;
    try (InProcessAgent agent = InProcessAgent.start(withAgentFlags(flags, endpoint))) {
      Poll.until(
          "the agent names what it may not do: " + named,
          Duration.ofSeconds(30),
          () -> agent.get("/status").body().contains(named));
      String status = agent.get("/status").body();
      assertThat(status)
          .as("the server's own 403 text")
          .containsPattern("forbidden|403")
          .contains(resource.replace("/status", ""));
    }
  }

  @org.junit.jupiter.api.Test
  void withTheWholeRoleNothingIsRefused() {
    String ns = "least-" + NAMESPACES.incrementAndGet();
    KubePods pods = new KubePods(kube, ns, "db").withChartRbac(dir);
    List<String> flags = podOwnedByAStatefulSet(pods, ns);
    try (InProcessAgent agent = InProcessAgent.start(withAgentFlags(flags, etcdUrl))) {
      Poll.until(
          "the leader's agent read the StatefulSet and found nothing surplus",
          Duration.ofSeconds(30),
          () -> agent.get("/status").body().contains("\"reason\":\"NoSurplusMember\""));
      Poll.until(
          "the EtcdMember written",
          Duration.ofSeconds(30),
          () ->
              kube.admin()
                      .get(
                          "/apis/etcd-member-agent.io/v1alpha1/namespaces/"
                              + ns
                              + "/etcdmembers/db-0")
                      .status()
                  == 200);
      String status = agent.get("/status").body();
      verbs().forEach(v -> assertThat(status).doesNotContain((String) v.get()[3]));
    }
  }

  private static String[] withAgentFlags(List<String> flags, String endpoint) {
    List<String> all = new ArrayList<>(flags);
    all.addAll(
        List.of(
            "--etcd-endpoint=" + endpoint,
            "--poll-interval=200ms",
            "--down-event-after=1s",
            "--member-resource=on",
            "--scale-down-check-interval=1s",
            "--remove-surplus-members=true")); // as the chart's cluster mode runs it
    return all.toArray(String[]::new);
  }

  /** Pod db-0, owned by StatefulSet db (replicas 1); the agent's flags to publish to it. */
  private List<String> podOwnedByAStatefulSet(KubePods pods, String ns) {
    String stsUid =
        kube.admin()
            .postJson(
                "/apis/apps/v1/namespaces/" + ns + "/statefulsets",
                """
                {"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},
                 "spec":{"replicas":1,"serviceName":"db-peer",
                         "selector":{"matchLabels":{"app":"db"}},
                         "template":{"metadata":{"labels":{"app":"db"}},
                                     "spec":{"containers":[{"name":"etcd","image":"etcd"}]}}}}
                """)
            .getAsJsonObject("metadata")
            .get("uid")
            .getAsString();
    List<String> flags = new ArrayList<>(pods.agentFlagsFor("db-0", dir));
    JsonObject owner = new JsonObject();
    owner.addProperty("apiVersion", "apps/v1");
    owner.addProperty("kind", "StatefulSet");
    owner.addProperty("name", "db");
    owner.addProperty("uid", stsUid);
    owner.addProperty("controller", true);
    JsonArray owners = new JsonArray();
    owners.add(owner);
    JsonObject meta = new JsonObject();
    meta.add("ownerReferences", owners);
    JsonObject patch = new JsonObject();
    patch.add("metadata", meta);
    assertThat(
            kube.admin()
                .send(
                    "PATCH",
                    "/api/v1/namespaces/" + ns + "/pods/db-0",
                    "application/merge-patch+json",
                    patch.toString())
                .status())
        .isEqualTo(200);
    return flags;
  }

  private JsonArray rules(KubePods pods) {
    return kube.admin().getJson(rolePath(pods)).getAsJsonArray("rules");
  }

  private static String rolePath(KubePods pods) {
    return "/apis/rbac.authorization.k8s.io/v1/namespaces/"
        + pods.namespace()
        + "/roles/"
        + pods.role();
  }

  /** The Role without {@code verb} on {@code group}/{@code resource}; an emptied rule goes. */
  private void dropVerb(KubePods pods, String group, String resource, String verb) {
    JsonObject role = kube.admin().getJson(rolePath(pods));
    JsonArray kept = new JsonArray();
    boolean dropped = false;
    for (JsonElement e : role.getAsJsonArray("rules")) {
      JsonObject rule = e.getAsJsonObject();
      boolean matches =
          rule.getAsJsonArray("apiGroups").toString().equals("[\"" + group + "\"]")
              && rule.getAsJsonArray("resources").toString().equals("[\"" + resource + "\"]");
      if (matches) {
        JsonArray verbs = new JsonArray();
        for (JsonElement v : rule.getAsJsonArray("verbs")) {
          if (v.getAsString().equals(verb)) {
            dropped = true;
          } else {
            verbs.add(v);
          }
        }
        rule.add("verbs", verbs);
        if (verbs.isEmpty()) {
          continue;
        }
      }
      kept.add(rule);
    }
    assertThat(dropped).as("the chart's Role has " + resource + " " + verb).isTrue();
    role.add("rules", kept);
    assertThat(kube.admin().put(rolePath(pods), role.toString()).ok()).isTrue();
  }
}
