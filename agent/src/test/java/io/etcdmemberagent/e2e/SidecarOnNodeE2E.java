package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * Sidecar mode on the real node, beside StatefulSets this project did not write, with the agent
 * added exactly as the chart's README says: its snippet is read from the Markdown and merged into
 * each user's manifest. Two shapes: etcd's own documented StatefulSet (static bootstrap, {@code
 * Parallel}, the plain image, no init container, data at the volume's root with {@code
 * --wal-dir=/data/wal}, one headless Service publishing not-ready Pods), and a layout with client
 * TLS on another port and another data path. For each: every Pod Ready through the gate, the
 * conditions, an EtcdMember per member, metrics a scraper reads; 3 → 2 → 3 and a rolling restart
 * leave the same members, all started voters, serving writes (as without the agent: removal is off
 * in sidecar mode, so the agent must change nothing of the membership); {@code helm uninstall} of
 * the sidecar release leaves the StatefulSet running.
 */
class SidecarOnNodeE2E {

  static final Path README = ChartRelease.CHART.resolve("README.md");

  @TempDir Path dir;

  /** A user's StatefulSet shape: its manifest (with the agent merged in) and how to reach etcd. */
  record Shape(
      String name,
      String namespace,
      String release,
      int clientPort,
      String scheme,
      String dataMount,
      String dataDir,
      List<String> etcdctlTls) {

    String statefulSet() {
      return name;
    }

    String pod(int i) {
      return name + "-" + i;
    }
  }

  @Test
  void theAgentBesideEtcdsDocumentedStatefulSetAndAnotherLayout() throws Exception {
    assumeTrue(KubeNode.available(), "the node needs root");
    KubeNode node = KubeNode.shared();
    Shape documented =
        new Shape("etcd", "opguide", "etcd-agent", 2379, "http", "/data", "/data", List.of());
    Shape layout =
        new Shape(
            "kv",
            "layout",
            "kv-agent",
            12379,
            "https",
            "/var/lib/etcd-data",
            "/var/lib/etcd-data/default",
            List.of(
                "--cacert=/etc/etcd/tls/ca.crt",
                "--cert=/etc/etcd/tls/tls.crt",
                "--key=/etc/etcd/tls/tls.key"));
    for (Shape shape : List.of(documented, layout)) {
      runShape(node, readmeSnippet(), shape); // read afresh: each shape adapts its own copy
    }
  }

  private void runShape(KubeNode node, Map<String, Object> snippet, Shape shape) throws Exception {
    ChartRelease agentRelease =
        new ChartRelease(node, shape.release(), shape.namespace(), new EtcdTestClient());
    node.kubectl("create", "namespace", shape.namespace());
    try {
      long started = System.nanoTime();
      agentRelease.install("mode=sidecar");
      if (shape.scheme().equals("https")) {
        clientTlsSecret(node, shape);
      }
      Path manifest = dir.resolve(shape.name() + ".yaml");
      Files.writeString(manifest, manifest(node, snippet, shape));
      node.kubectl("apply", "-n", shape.namespace(), "-f", manifest.toString());
      agentRelease.awaitReadyVotersByConditions(3, Duration.ofMinutes(5));
      System.out.printf(
          "[sidecar %s] 3 Ready through the gate in %.1f s%n",
          shape.name(), (System.nanoTime() - started) / 1e9);

      for (JsonObject pod : agentRelease.pods()) {
        String name = pod.getAsJsonObject("metadata").get("name").getAsString();
        for (String type : List.of("ready", "voting-member", "in-sync", "alarms-clear")) {
          assertThat(ChartRelease.condition(pod, ChartRelease.PREFIX + type))
              .as("%s %s", name, type)
              .isEqualTo("True");
        }
        if (shape.scheme().equals("http")) {
          // etcd's own image runs as root and makes member/ 0700: the agent (65532) says so
          assertThat(reason(pod, ChartRelease.PREFIX + "disk-healthy"))
              .as("%s disk-healthy beside a root etcd", name)
              .isEqualTo("DataDirUnreadable");
        } else {
          assertThat(ChartRelease.condition(pod, ChartRelease.PREFIX + "disk-healthy"))
              .as("%s disk-healthy, etcd running as the agent's user", name)
              .isEqualTo("True");
        }
      }
      assertThat(agentRelease.etcdMembers())
          .as("each member's own agent wrote its EtcdMember")
          .containsOnlyKeys(shape.pod(0), shape.pod(1), shape.pod(2));
      String anyIp = agentRelease.podIps().values().iterator().next();
      agentRelease.awaitAgentReader(anyIp);
      assertThat(agentRelease.agentGet(anyIp, "/metrics").body())
          .as("a scraper with the metrics-reader Role reads the agent")
          .contains("\netcd_member_agent_ready 1.0\n")
          .contains("\netcd_member_agent_is_voter 1.0\n")
          .contains(
              shape.scheme().equals("http")
                  ? "\netcd_member_agent_disk_healthy NaN\n"
                  : "\netcd_member_agent_disk_healthy 1.0\n");

      Map<String, String> before = memberIds(node, shape);
      assertThat(before).hasSize(3);
      write(node, shape, "before");

      // 3 -> 2: etcd keeps three members, one of them stopped; the agent removes nothing
      node.kubectl(
          "scale", "statefulset/" + shape.statefulSet(), "-n", shape.namespace(), "--replicas=2");
      Poll.until(
          shape.pod(2) + " gone",
          Duration.ofMinutes(2),
          () -> agentRelease.pod(shape.pod(2)) == null);
      agentRelease.awaitReadyVotersByConditions(2, Duration.ofMinutes(2));
      assertThat(memberIds(node, shape))
          .as("at 2 replicas: the same three members, as without the agent")
          .isEqualTo(before);
      write(node, shape, "at-two");

      node.kubectl(
          "scale", "statefulset/" + shape.statefulSet(), "-n", shape.namespace(), "--replicas=3");
      agentRelease.awaitReadyVotersByConditions(3, Duration.ofMinutes(3));
      assertThat(memberIds(node, shape)).as("back at 3: the same members").isEqualTo(before);
      assertEveryMemberStartedAndHealthy(node, shape);

      started = System.nanoTime();
      node.kubectl(
          "rollout", "restart", "statefulset/" + shape.statefulSet(), "-n", shape.namespace());
      node.must(
          "kubectl",
          600,
          "rollout",
          "status",
          "statefulset/" + shape.statefulSet(),
          "-n",
          shape.namespace(),
          "--timeout=8m");
      agentRelease.awaitReadyVotersByConditions(3, Duration.ofMinutes(3));
      System.out.printf(
          "[sidecar %s] rolling restart through the gate in %.1f s%n",
          shape.name(), (System.nanoTime() - started) / 1e9);
      assertThat(memberIds(node, shape))
          .as("after the restart: the same members")
          .isEqualTo(before);
      assertEveryMemberStartedAndHealthy(node, shape);
      assertThat(read(node, shape, "before")).isEqualTo("before");
      assertThat(read(node, shape, "at-two")).isEqualTo("at-two");

      // uninstalling the agent's release leaves the user's StatefulSet running
      agentRelease.uninstall();
      assertThat(
              node.kubectl(
                  "get",
                  "statefulset",
                  shape.statefulSet(),
                  "-n",
                  shape.namespace(),
                  "-o",
                  "jsonpath={.status.readyReplicas}"))
          .as("the StatefulSet after helm uninstall")
          .isEqualTo("3");
      write(node, shape, "after-uninstall");
      assertThat(read(node, shape, "after-uninstall")).isEqualTo("after-uninstall");
    } finally {
      node.tool("kubectl", 180, "delete", "namespace", shape.namespace(), "--wait=true");
    }
  }

  /**
   * The README's sidecar snippet: the first YAML block of "## Sidecar mode", as the user copies it.
   */
  @SuppressWarnings("unchecked")
  static Map<String, Object> readmeSnippet() throws Exception {
    String readme = Files.readString(README);
    int section = readme.indexOf("## Sidecar mode");
    assertThat(section).as("the README's sidecar section").isPositive();
    Matcher block = Pattern.compile("```yaml\\n(.*?)```", Pattern.DOTALL).matcher(readme);
    assertThat(block.find(section)).as("a yaml block in the sidecar section").isTrue();
    return (Map<String, Object>) new Yaml().load(block.group(1));
  }

  /** The user's manifest for {@code shape}, with the README's agent merged into its Pods. */
  @SuppressWarnings("unchecked")
  private String manifest(KubeNode node, Map<String, Object> snippet, Shape shape)
      throws Exception {
    Map<String, Object> values = new Yaml().load(Files.readString(node.values()));
    Map<String, Object> agentImage = (Map<String, Object>) values.get("image");
    Map<String, Object> etcdImage =
        (Map<String, Object>) ((Map<String, Object>) values.get("etcd")).get("image");
    String etcdRef = etcdImage.get("repository") + ":" + etcdImage.get("tag");
    String agentRef = agentImage.get("repository") + ":" + agentImage.get("tag");

    Map<String, Object> snippetPod =
        (Map<String, Object>)
            ((Map<String, Object>) ((Map<String, Object>) snippet.get("spec")).get("template"))
                .get("spec");
    List<Map<String, Object>> snippetContainers =
        (List<Map<String, Object>>) snippetPod.get("containers");
    Map<String, Object> etcdAdditions = snippetContainers.get(0);
    Map<String, Object> agent = snippetContainers.get(1);

    String peerService = shape.name() + (shape.scheme().equals("https") ? "-peer" : "");
    String clientService = shape.name() + (shape.scheme().equals("https") ? "-client" : "");
    agent.put("image", agentRef);
    Map<String, String> env = new LinkedHashMap<>();
    env.put(
        "ETCD_MEMBER_AGENT_ETCD_ENDPOINT", shape.scheme() + "://127.0.0.1:" + shape.clientPort());
    env.put(
        "ETCD_MEMBER_AGENT_CLUSTER_ENDPOINTS",
        shape.scheme() + "://" + clientService + ".$(POD_NAMESPACE).svc:" + shape.clientPort());
    env.put(
        "ETCD_MEMBER_AGENT_PEER_URLS",
        "http://$(POD_NAME)." + peerService + ".$(POD_NAMESPACE).svc:2380");
    env.put("ETCD_MEMBER_AGENT_DATA_DIR", shape.dataDir());
    for (Map<String, Object> e : (List<Map<String, Object>>) agent.get("env")) {
      String name = (String) e.get("name");
      if (env.containsKey(name)) {
        e.put("value", env.get(name));
      }
    }
    assertThat(((List<Map<String, Object>>) agent.get("env")).stream().map(e -> e.get("name")))
        .as("the README's agent sets every variable this test adapts")
        .containsAll(env.keySet());
    List<Map<String, Object>> agentEnv = (List<Map<String, Object>>) agent.get("env");
    if (shape.scheme().equals("https")) {
      agentEnv.add(Map.of("name", "ETCD_MEMBER_AGENT_CACERT", "value", "/etc/etcd/tls/ca.crt"));
      agentEnv.add(Map.of("name", "ETCD_MEMBER_AGENT_CERT", "value", "/etc/etcd/tls/tls.crt"));
      agentEnv.add(Map.of("name", "ETCD_MEMBER_AGENT_KEY", "value", "/etc/etcd/tls/tls.key"));
    }
    for (Map<String, Object> m : (List<Map<String, Object>>) agent.get("volumeMounts")) {
      if (m.get("name").equals("data")) {
        m.put("mountPath", shape.dataMount());
      }
    }
    if (shape.scheme().equals("https")) {
      ((List<Map<String, Object>>) agent.get("volumeMounts"))
          .add(Map.of("name", "etcd-tls", "mountPath", "/etc/etcd/tls", "readOnly", true));
    }

    Map<String, Object> etcd = new LinkedHashMap<>();
    etcd.put("name", "etcd");
    etcd.put("image", etcdRef);
    etcd.put("command", List.of("etcd"));
    etcd.put("args", etcdArgs(shape, peerService, clientService));
    etcd.put(
        "env",
        List.of(
            Map.of(
                "name",
                "POD_NAME",
                "valueFrom",
                Map.of("fieldRef", Map.of("fieldPath", "metadata.name"))),
            Map.of(
                "name",
                "POD_NAMESPACE",
                "valueFrom",
                Map.of("fieldRef", Map.of("fieldPath", "metadata.namespace")))));
    etcd.put(
        "ports",
        List.of(
            Map.of("name", "client", "containerPort", shape.clientPort()),
            Map.of("name", "peer", "containerPort", 2380)));
    List<Map<String, Object>> etcdMounts = new ArrayList<>();
    etcdMounts.add(Map.of("name", "data", "mountPath", shape.dataMount()));
    if (shape.scheme().equals("https")) {
      etcdMounts.add(Map.of("name", "etcd-tls", "mountPath", "/etc/etcd/tls", "readOnly", true));
    }
    etcd.put("volumeMounts", etcdMounts);
    etcdAdditions.forEach(
        (k, v) -> {
          if (!k.equals("name")) {
            etcd.put(k, v); // the README's readinessProbe and preStop hold
          }
        });

    Map<String, Object> podSpec = new LinkedHashMap<>();
    podSpec.put(
        "serviceAccountName",
        ((String) snippetPod.get("serviceAccountName")).replace("<release>", shape.release()));
    podSpec.put("enableServiceLinks", snippetPod.get("enableServiceLinks"));
    podSpec.put("securityContext", snippetPod.get("securityContext"));
    if (shape.scheme().equals("https")) {
      // this user runs etcd as the agent's user, so the agent can read etcd's 0700 member/
      podSpec.put(
          "securityContext", Map.of("runAsUser", 65532, "runAsGroup", 65532, "fsGroup", 65532));
    }
    podSpec.put("readinessGates", snippetPod.get("readinessGates"));
    podSpec.put("containers", List.of(etcd, agent));
    List<Map<String, Object>> volumes = new ArrayList<>();
    for (Map<String, Object> v : (List<Map<String, Object>>) snippetPod.get("volumes")) {
      Map<String, Object> secret = (Map<String, Object>) v.get("secret");
      if (secret != null) {
        secret.put(
            "secretName",
            ((String) secret.get("secretName")).replace("<release>", shape.release()));
      }
      volumes.add(v);
    }
    if (shape.scheme().equals("https")) {
      volumes.add(
          Map.of("name", "etcd-tls", "secret", Map.of("secretName", shape.name() + "-tls")));
    }
    podSpec.put("volumes", volumes);

    Map<String, Object> labels =
        Map.of("app", shape.name(), "app.kubernetes.io/instance", shape.release());
    Map<String, Object> sts = new LinkedHashMap<>();
    sts.put("apiVersion", "apps/v1");
    sts.put("kind", "StatefulSet");
    sts.put("metadata", Map.of("name", shape.statefulSet()));
    sts.put(
        "spec",
        Map.of(
            "serviceName",
            peerService,
            "replicas",
            3,
            "podManagementPolicy",
            "Parallel",
            "selector",
            Map.of("matchLabels", Map.of("app", shape.name())),
            "template",
            Map.of("metadata", Map.of("labels", labels), "spec", podSpec),
            "volumeClaimTemplates",
            List.of(
                Map.of(
                    "metadata",
                    Map.of("name", "data"),
                    "spec",
                    Map.of(
                        "accessModes",
                        List.of("ReadWriteOnce"),
                        "storageClassName",
                        "local-path",
                        "resources",
                        Map.of("requests", Map.of("storage", "1Gi")))))));

    List<Object> docs = new ArrayList<>();
    docs.add(
        service(
            peerService,
            shape,
            true,
            shape.scheme().equals("https")
                ? List.of(Map.of("name", "peer", "port", 2380))
                : List.of(
                    Map.of("name", "client", "port", shape.clientPort()),
                    Map.of("name", "peer", "port", 2380))));
    if (shape.scheme().equals("https")) {
      docs.add(
          service(
              clientService,
              shape,
              false,
              List.of(Map.of("name", "client", "port", shape.clientPort()))));
    }
    docs.add(sts);
    return new Yaml().dumpAll(docs.iterator());
  }

  private static List<String> etcdArgs(Shape shape, String peerService, String clientService) {
    String host = "$(POD_NAME)." + peerService + ".$(POD_NAMESPACE).svc";
    StringBuilder initial = new StringBuilder();
    for (int i = 0; i < 3; i++) {
      initial
          .append(i == 0 ? "" : ",")
          .append(shape.pod(i))
          .append("=http://")
          .append(shape.pod(i))
          .append('.')
          .append(peerService)
          .append(".$(POD_NAMESPACE).svc:2380");
    }
    List<String> args =
        new ArrayList<>(
            List.of(
                "--name=$(POD_NAME)",
                "--data-dir=" + shape.dataDir(),
                "--listen-peer-urls=http://0.0.0.0:2380",
                "--initial-advertise-peer-urls=http://" + host + ":2380",
                "--listen-client-urls=" + shape.scheme() + "://0.0.0.0:" + shape.clientPort(),
                "--advertise-client-urls="
                    + shape.scheme()
                    + "://"
                    + host
                    + ":"
                    + shape.clientPort(),
                "--initial-cluster=" + initial,
                "--initial-cluster-state=new",
                "--initial-cluster-token=" + shape.name()));
    if (shape.scheme().equals("https")) {
      args.addAll(
          List.of(
              "--client-cert-auth",
              "--trusted-ca-file=/etc/etcd/tls/ca.crt",
              "--cert-file=/etc/etcd/tls/tls.crt",
              "--key-file=/etc/etcd/tls/tls.key"));
    } else {
      args.add("--wal-dir=/data/wal"); // etcd's op-guide: the WAL beside the data, on one volume
    }
    return args;
  }

  private static Map<String, Object> service(
      String name, Shape shape, boolean headless, List<Map<String, Object>> ports) {
    Map<String, Object> spec = new LinkedHashMap<>();
    if (headless) {
      spec.put("clusterIP", "None");
      spec.put("publishNotReadyAddresses", true);
    }
    spec.put("selector", Map.of("app", shape.name()));
    spec.put("ports", ports);
    return Map.of(
        "apiVersion", "v1", "kind", "Service", "metadata", Map.of("name", name), "spec", spec);
  }

  /** A CA and one certificate (server and client use) for every member's names and 127.0.0.1. */
  private void clientTlsSecret(KubeNode node, Shape shape) {
    TestPki pki = new TestPki(dir, shape.name() + "-pki");
    String ns = shape.namespace();
    TestPki.Issued cert =
        pki.issue(
            shape.name(),
            Instant.now().minus(Duration.ofDays(1)),
            Instant.now().plus(Duration.ofDays(30)),
            List.of(
                "*." + shape.name() + "-peer." + ns + ".svc",
                shape.name() + "-client." + ns + ".svc",
                "localhost"),
            List.of("127.0.0.1"));
    node.kubectl(
        "create",
        "secret",
        "generic",
        shape.name() + "-tls",
        "-n",
        ns,
        "--from-file=ca.crt=" + pki.caCert(),
        "--from-file=tls.crt=" + cert.cert(),
        "--from-file=tls.key=" + cert.key());
  }

  private static List<String> etcdctl(Shape shape, String... args) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "exec",
                "-n",
                shape.namespace(),
                shape.pod(0),
                "-c",
                "etcd",
                "--",
                "etcdctl",
                "--endpoints=" + shape.scheme() + "://127.0.0.1:" + shape.clientPort()));
    all.addAll(shape.etcdctlTls());
    all.addAll(List.of(args));
    return all;
  }

  /** Member IDs by peer URL, read through the first member's etcd. */
  private static Map<String, String> memberIds(KubeNode node, Shape shape) {
    JsonObject list =
        JsonParser.parseString(
                node.kubectl(etcdctl(shape, "member", "list", "-w", "json").toArray(String[]::new)))
            .getAsJsonObject();
    Map<String, String> ids = new java.util.TreeMap<>();
    for (JsonElement e : list.getAsJsonArray("members")) {
      JsonObject m = e.getAsJsonObject();
      ids.put(m.getAsJsonArray("peerURLs").get(0).getAsString(), m.get("ID").getAsString());
    }
    return ids;
  }

  private static void assertEveryMemberStartedAndHealthy(KubeNode node, Shape shape) {
    JsonObject list =
        JsonParser.parseString(
                node.kubectl(etcdctl(shape, "member", "list", "-w", "json").toArray(String[]::new)))
            .getAsJsonObject();
    TreeSet<String> names = new TreeSet<>();
    for (JsonElement e : list.getAsJsonArray("members")) {
      JsonObject m = e.getAsJsonObject();
      assertThat(m.has("isLearner") && m.get("isLearner").getAsBoolean())
          .as("a learner in %s", list)
          .isFalse();
      names.add(m.has("name") ? m.get("name").getAsString() : "");
    }
    assertThat(names).containsExactly(shape.pod(0), shape.pod(1), shape.pod(2));
    String health =
        node.kubectl(
            etcdctl(shape, "endpoint", "health", "--cluster", "-w", "json").toArray(String[]::new));
    assertThat(JsonParser.parseString(health).getAsJsonArray())
        .as("every member healthy: %s", health)
        .hasSize(3)
        .allSatisfy(h -> assertThat(h.getAsJsonObject().get("health").getAsBoolean()).isTrue());
  }

  private static void write(KubeNode node, Shape shape, String value) {
    node.kubectl(etcdctl(shape, "put", "sidecar-" + value, value).toArray(String[]::new));
  }

  private static String read(KubeNode node, Shape shape, String value) {
    return node.kubectl(
            etcdctl(shape, "get", "sidecar-" + value, "--print-value-only").toArray(String[]::new))
        .strip();
  }

  private static String reason(JsonObject pod, String type) {
    for (JsonElement c : pod.getAsJsonObject("status").getAsJsonArray("conditions")) {
      JsonObject o = c.getAsJsonObject();
      if (o.get("type").getAsString().equals(type)) {
        return o.has("reason") ? o.get("reason").getAsString() : "";
      }
    }
    return null;
  }
}
