package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.Etcdctl;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.HttpsClients;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.PrometheusBinaries;
import io.etcdmemberagent.testing.SingleEtcd;
import io.etcdmemberagent.testing.TestPki;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Prometheus scraping three agents (the real jar) beside a real etcd cluster, with the
 * chart's rules (their {@code for:} shortened to seconds; the durations themselves are tested by
 * promtool in {@code AlertRulesIT}) and the dashboard's queries: every expression evaluates without
 * error, the core panels have data, and real faults — a peer certificate near its end, a member
 * killed, a real NOSPACE, a learner whose etcd does not start — make their alerts go pending, then
 * firing through Prometheus' own rule evaluation, and clear afterwards (renewed, restarted,
 * compacted and disarmed, started and promoted). The agents serve HTTPS with {@code --authz=kube}
 * against a real kube-apiserver, as the chart's ServiceAccount: Prometheus scrapes with a bearer
 * token of its own ServiceAccount, bound to a metrics-reader role, as a ServiceMonitor's {@code
 * authorization} does.
 */
class PrometheusE2E {

  static final String VERSION = EtcdBinaries.primary();
  static final Path CHART = Path.of("..", "charts", "etcd-member-agent");
  static final String ANY_POD = "*";
  static final String NS = "alerts";
  static final String READER = NS + "-metrics-reader";

  @TempDir Path dir;

  @Test
  @Timeout(600)
  void theChartsAlertsAndPanelsWorkOnARealPrometheus() throws IOException {
    try (EtcdCluster cluster =
        EtcdCluster.startWithFlags(VERSION, 3, List.of("--quota-backend-bytes=4194304"))) {
      List<AgentProcess> agents = new ArrayList<>();
      KubeControlPlane kube = KubeControlPlane.shared();
      KubePods pods = new KubePods(kube, NS, "db").withChartRbac(dir);
      Path token = secureScraping(kube);
      TestPki servingPki = new TestPki(dir, "serving");
      TestPki.Issued serving = servingPki.issue("agent");
      Process prometheus = null;
      Process peerEtcd = null;
      try {
        // A fourth, single-member etcd whose https peer URL serves a certificate ending in 10 days.
        TestPki pki = new TestPki(dir, "peer");
        Path peerCert = dir.resolve("peer.crt");
        Path peerKey = dir.resolve("peer.key");
        placeCert(pki, Duration.ofDays(10), peerCert, peerKey);
        String peerClient = "http://127.0.0.1:" + FreePorts.next();
        String peerUrl = "https://127.0.0.1:" + FreePorts.next();
        peerEtcd =
            SingleEtcd.start(
                VERSION,
                "peer0",
                dir.resolve("peer0.etcd"),
                peerClient,
                peerUrl,
                peerUrl,
                dir.resolve("peer0.log"),
                "--peer-cert-file",
                peerCert.toString(),
                "--peer-key-file",
                peerKey.toString());
        int peerAgentPort = FreePorts.next();
        agents.add(
            AgentProcess.start(
                peerAgentPort,
                Map.of(),
                args(
                    secure(pods, "peer-0", serving),
                    "run",
                    "--etcd-endpoint=" + peerClient,
                    "--http-host=127.0.0.1",
                    "--http-port=" + peerAgentPort,
                    "--poll-interval=500ms",
                    "--peer-cacert=" + pki.caCert(),
                    "--peer-tls-check-interval=1s")));
        StringBuilder targets =
            new StringBuilder(
                "  - targets: ['127.0.0.1:%d']\n    labels: {pod: peer-0}\n"
                    .formatted(peerAgentPort));
        for (int i = 0; i < 3; i++) {
          EtcdMember m = cluster.member(i);
          int port = FreePorts.next();
          agents.add(
              AgentProcess.start(
                  port,
                  Map.of(),
                  args(
                      secure(pods, "etcd-" + i, serving),
                      "run",
                      "--etcd-endpoint=" + m.clientUrl(),
                      "--http-host=127.0.0.1",
                      "--http-port=" + port,
                      "--poll-interval=500ms",
                      "--data-dir=" + m.dataDir(),
                      "--fsync-probe-interval=1s")));
          targets.append(
              "  - targets: ['127.0.0.1:%d']\n    labels: {pod: etcd-%d}\n".formatted(port, i));
        }
        int learnerAgentPort = FreePorts.next();
        targets.append(
            "  - targets: ['127.0.0.1:%d']\n    labels: {pod: etcd-3}\n"
                .formatted(learnerAgentPort));
        Files.writeString(dir.resolve("rules.yml"), shortened(renderedRules()));
        Files.writeString(
            dir.resolve("prometheus.yml"),
            """
            global: {scrape_interval: 1s, evaluation_interval: 1s}
            rule_files: [rules.yml]
            scrape_configs:
            - job_name: etcd-member-agent
              scheme: https
              tls_config: {ca_file: %s}
              authorization: {type: Bearer, credentials_file: %s}
              static_configs:
            %s"""
                .formatted(servingPki.caCert(), token, targets));
        int port = FreePorts.next();
        prometheus =
            new ProcessBuilder(
                    PrometheusBinaries.prometheus().toString(),
                    "--config.file=" + dir.resolve("prometheus.yml"),
                    "--storage.tsdb.path=" + dir.resolve("tsdb"),
                    "--web.listen-address=127.0.0.1:" + port)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("prometheus.log").toFile())
                .start();
        Prometheus prom = new Prometheus(port);
        Poll.until(
            "Prometheus scraping four agents",
            Duration.ofSeconds(60),
            () ->
                prom.query("count(up{job=\"etcd-member-agent\"} == 1)")
                    .toString()
                    .contains("\"4\""));

        int anyAgent = agents.get(0).port();
        javax.net.ssl.SSLContext anyServer = HttpsClients.anyServer();
        assertThat(HttpsClients.get(anyServer, anyAgent, "/metrics", null).status())
            .as("without Prometheus' token")
            .isEqualTo(401);
        assertThat(HttpsClients.get(anyServer, anyAgent, "/readyz", null).status())
            .as("health stays anonymous")
            .isIn(200, 503);
        Poll.until(
            "the core panels have data",
            Duration.ofSeconds(60),
            () ->
                corePanels().stream()
                    .allMatch(q -> prom.query(q).getAsJsonArray("result").size() > 0));
        for (String expr : expressions()) {
          JsonObject answer = prom.answer(expr);
          assertThat(answer.get("status").getAsString())
              .as("%s: %s", expr, answer)
              .isEqualTo("success");
        }
        try {
          Poll.until(
              "plain-HTTP peers and the certificate near its end are all that is said",
              Duration.ofSeconds(60),
              () ->
                  prom.alertNames()
                      .equals(
                          java.util.Set.of(
                              "EtcdMemberPeerTlsProblem", "EtcdMemberCertificateExpiresSoon")));
        } catch (AssertionError e) {
          throw new AssertionError(e.getMessage() + ": " + prom.alerts(), e);
        }
        prom.awaitAlert("EtcdMemberCertificateExpiresSoon", "peer-0", "firing");

        // The peer certificate renewed in place: etcd serves it at the next handshake, the
        // agent inspects it again within a second, and the alert clears.
        placeCert(pki, Duration.ofDays(90), peerCert, peerKey);
        prom.awaitNoAlert("EtcdMemberCertificateExpiresSoon");

        // A member killed: EtcdMemberDown for it, pending first, then firing; gone after a restart.
        EtcdMember down = cluster.member(2);
        down.kill();
        prom.awaitAlert("EtcdMemberDown", "etcd-2", "pending");
        prom.awaitAlert("EtcdMemberDown", "etcd-2", "firing");
        down.restart();
        prom.awaitNoAlert("EtcdMemberDown");

        // A real NOSPACE: the 4 MiB quota filled; cleared by compaction, defragmentation, disarm.
        String endpoint = cluster.member(0).clientUrl();
        cluster.client().fillUntilNoSpace(endpoint, "nospace/");
        long revision = cluster.client().status(endpoint).getHeader().getRevision();
        // The member that first applies an entry beyond the quota raises NOSPACE for itself (and
        // only one member: etcd raises it once); which one that is depends on timing.
        prom.awaitAlert("EtcdMemberAlarm", ANY_POD, "pending");
        prom.awaitAlert("EtcdMemberAlarm", ANY_POD, "firing");
        Etcdctl etcdctl = Etcdctl.at(cluster.clientUrls());
        etcdctl.run("del", "nospace/", "--prefix");
        etcdctl.run("compaction", Long.toString(revision + 1));
        etcdctl.run("defrag", "--cluster");
        etcdctl.run("alarm", "disarm");
        prom.awaitNoAlert("EtcdMemberAlarm");

        // A learner added whose etcd does not start (its Pod stuck): stalled after
        // --stall-timeout; once it starts, it catches up, its agent promotes it, the alert clears.
        EtcdMember learner = cluster.addMember(true);
        agents.add(
            AgentProcess.start(
                learnerAgentPort,
                Map.of(),
                args(
                    secure(pods, "etcd-3", serving),
                    "run",
                    "--etcd-endpoint=" + learner.clientUrl(),
                    "--cluster-endpoints=" + endpoint,
                    "--peer-urls=" + learner.peerUrl(),
                    "--http-host=127.0.0.1",
                    "--http-port=" + learnerAgentPort,
                    "--poll-interval=500ms",
                    "--stall-timeout=3s")));
        prom.awaitAlert("EtcdMemberLearnerStalled", "etcd-3", "pending");
        prom.awaitAlert("EtcdMemberLearnerStalled", "etcd-3", "firing");
        cluster.startJoined(learner);
        prom.awaitNoAlert("EtcdMemberLearnerStalled");
        Poll.until(
            "the learner promoted by its agent",
            Duration.ofSeconds(60),
            () ->
                prom.query("etcd_member_agent_is_voter{pod=\"etcd-3\"} == 1")
                        .getAsJsonArray("result")
                        .size()
                    == 1);
      } finally {
        if (prometheus != null) {
          Processes.kill(prometheus);
        }
        if (peerEtcd != null) {
          Processes.kill(peerEtcd);
        }
        kube.kubectl(
            "delete",
            "clusterrolebinding",
            NS + "-agent-reviews",
            NS + "-prometheus-reads",
            "--ignore-not-found");
        kube.kubectl("delete", "clusterrole", READER, "--ignore-not-found");
        agents.forEach(AgentProcess::close);
      }
    }
  }

  /**
   * The chart's ServiceAccount may ask TokenReviews and SubjectAccessReviews; Prometheus' own
   * ServiceAccount may get /metrics and /status. Returns the file with Prometheus' token.
   */
  private Path secureScraping(KubeControlPlane kube) throws IOException {
    kube.kubectl(
        "create",
        "clusterrolebinding",
        NS + "-agent-reviews",
        "--clusterrole=system:auth-delegator",
        "--serviceaccount=" + NS + ":db");
    kube.kubectl("create", "serviceaccount", "prometheus", "-n", NS);
    kube.grantMetricsRead(READER, NS + "-prometheus-reads", NS, "prometheus");
    return Files.writeString(
        dir.resolve("prometheus.token"), kube.token(NS, "prometheus", Duration.ofHours(1), null));
  }

  /**
   * An agent's flags for HTTPS with {@code --authz=kube}, publishing to its own Pod object as the
   * chart's ServiceAccount.
   */
  private List<String> secure(KubePods pods, String pod, TestPki.Issued serving) {
    List<String> flags = new ArrayList<>(pods.agentFlagsFor(pod, dir));
    flags.add("--https-cert-file=" + serving.cert());
    flags.add("--https-key-file=" + serving.key());
    flags.add("--authz=kube");
    return flags;
  }

  /** {@code base} then {@code extra}, as one argument list. */
  private static String[] args(List<String> extra, String... base) {
    List<String> all = new ArrayList<>(List.of(base));
    all.addAll(extra);
    return all.toArray(String[]::new);
  }

  private static void placeCert(TestPki pki, Duration validFor, Path cert, Path key) {
    TestPki.Issued issued =
        pki.issue(
            "peer0",
            java.time.Instant.now().minus(Duration.ofDays(1)),
            java.time.Instant.now().plus(validFor),
            List.of("localhost"),
            List.of("127.0.0.1"));
    try {
      Files.copy(issued.cert(), cert, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      Files.copy(issued.key(), key, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The PrometheusRule's spec (its groups) as the chart renders it. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> renderedRules() {
    String manifest =
        new com.marcnuri.helm.Helm(CHART)
            .template()
            .withName("etcd")
            .withKubeVersion("1.36.3")
            .set("monitoring.prometheusRule.enabled", true)
            // helm-java's template asks a server for lookup(): name the serving pair instead
            .set("agent.https.secret", "unused")
            .call();
    for (String doc : manifest.split("(?m)^---\\s*$")) {
      if (doc.contains("kind: PrometheusRule")) {
        Map<String, Object> rule = io.kubernetes.client.util.Yaml.getSnakeYaml(null).load(doc);
        return (Map<String, Object>) rule.get("spec");
      }
    }
    throw new AssertionError("no PrometheusRule rendered");
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> rules(Map<String, Object> spec) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Object g : (List<Object>) spec.get("groups")) {
      for (Object r : (List<Object>) ((Map<String, Object>) g).get("rules")) {
        out.add((Map<String, Object>) r);
      }
    }
    return out;
  }

  /** The rules with every {@code for:} shortened to 3 s, so pending and firing happen here. */
  static String shortened(Map<String, Object> spec) {
    for (Map<String, Object> rule : rules(spec)) {
      rule.put("for", "3s");
    }
    return io.kubernetes.client.util.Yaml.getSnakeYaml(null).dump(spec);
  }

  private static List<String> corePanels() {
    return List.of(
        "etcd_member_agent_ready",
        "etcd_member_agent_lag_entries",
        "etcd_member_agent_member_state == 1",
        "etcd_member_agent_disk_free_ratio",
        "histogram_quantile(0.99, sum by (pod, le)"
            + " (rate(etcd_member_agent_fsync_probe_seconds_bucket[10m])))");
  }

  /** The dashboard's queries and the rules' expressions. */
  private static List<String> expressions() throws IOException {
    List<String> out = new ArrayList<>();
    String dashboard = Files.readString(CHART.resolve("dashboards/etcd-member-agent.json"));
    Matcher m = Pattern.compile("\"expr\":\\s*\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(dashboard);
    while (m.find()) {
      out.add(JsonParser.parseString("\"" + m.group(1) + "\"").getAsString());
    }
    assertThat(out).as("the dashboard's queries").hasSizeGreaterThanOrEqualTo(8);
    List<Map<String, Object>> rules = rules(renderedRules());
    assertThat(rules).as("the rules").hasSizeGreaterThanOrEqualTo(13);
    rules.forEach(r -> out.add((String) r.get("expr")));
    return out;
  }

  /** Prometheus' HTTP API. */
  record Prometheus(int port) {
    JsonObject answer(String query) {
      return JsonParser.parseString(
              Http.get(
                      "127.0.0.1",
                      port,
                      "/api/v1/query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8),
                      "application/json")
                  .body())
          .getAsJsonObject();
    }

    JsonObject query(String query) {
      JsonObject a = answer(query);
      if (!a.get("status").getAsString().equals("success")) {
        throw new AssertionError(query + ": " + a);
      }
      return a.getAsJsonObject("data");
    }

    JsonArray alerts() {
      return JsonParser.parseString(
              Http.get("127.0.0.1", port, "/api/v1/alerts", "application/json").body())
          .getAsJsonObject()
          .getAsJsonObject("data")
          .getAsJsonArray("alerts");
    }

    java.util.Set<String> alertNames() {
      java.util.Set<String> names = new java.util.TreeSet<>();
      for (JsonElement e : alerts()) {
        names.add(e.getAsJsonObject().getAsJsonObject("labels").get("alertname").getAsString());
      }
      return names;
    }

    boolean has(String alert, String pod, String state) {
      for (JsonElement e : alerts()) {
        JsonObject a = e.getAsJsonObject();
        JsonObject labels = a.getAsJsonObject("labels");
        if (labels.get("alertname").getAsString().equals(alert)
            && (pod.equals(ANY_POD) || labels.get("pod").getAsString().equals(pod))
            && a.get("state").getAsString().equals(state)) {
          return true;
        }
      }
      return false;
    }

    void awaitAlert(String alert, String pod, String state) {
      Poll.until(
          alert + " " + state + " for " + pod,
          Duration.ofSeconds(60),
          () -> has(alert, pod, state));
    }

    void awaitNoAlert(String alert) {
      Poll.until(
          alert + " cleared",
          Duration.ofSeconds(90),
          () -> alerts().toString().indexOf("\"alertname\":\"" + alert + "\"") < 0);
    }
  }
}
