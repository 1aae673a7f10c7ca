package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** The chart's alerts, evaluated by a real Prometheus on an install running on the node. */
final class ChartAlerts {

  private ChartAlerts() {}

  /**
   * A plain Prometheus scrapes the settled default install as the chart's ServiceMonitor would
   * (HTTPS verified against the serving pair's CA for the name the monitor names, a token bound to
   * the metrics-reader Role) and evaluates the chart's rendered rules: once every rule has been
   * evaluated on the scraped data, no alert is pending or firing. Pending already means an
   * expression is true, so no {@code for:} is waited out.
   */
  static void assertNoAlertOnTheSettledInstall(
      ChartRelease db, KubeNode node, Path dir, String what) throws Exception {
    String ns = db.namespace();
    Path ca = dir.resolve("serving-ca.crt");
    Files.write(
        ca,
        java.util.Base64.getDecoder()
            .decode(
                node.kubectl(
                        "get",
                        "secret",
                        db.name() + "-agent-serving",
                        "-n",
                        ns,
                        "-o",
                        "jsonpath={.data.ca\\.crt}")
                    .strip()));
    Path token = Files.writeString(dir.resolve("scraper.token"), db.readerToken());
    StringBuilder targets = new StringBuilder();
    db.podIps()
        .forEach(
            (pod, ip) ->
                targets.append(
                    "  - targets: ['%s:%d']\n    labels: {pod: %s}\n"
                        .formatted(ip, ChartRelease.AGENT_PORT, pod)));
    Files.writeString(
        dir.resolve("rules.yml"),
        io.kubernetes.client.util.Yaml.getSnakeYaml(null).dump(PrometheusE2E.renderedRules()));
    Files.writeString(
        dir.resolve("prometheus.yml"),
        """
        global: {scrape_interval: 1s, evaluation_interval: 1s}
        rule_files: [rules.yml]
        scrape_configs:
        - job_name: etcd-member-agent
          scheme: https
          tls_config: {ca_file: %s, server_name: metrics.%s-peer.%s.svc}
          authorization: {type: Bearer, credentials_file: %s}
          static_configs:
        %s"""
            .formatted(ca, db.name(), ns, token, targets));
    int port = io.etcdmemberagent.testing.FreePorts.next();
    Process prometheus =
        new ProcessBuilder(
                io.etcdmemberagent.testing.PrometheusBinaries.prometheus().toString(),
                "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("tsdb"),
                "--web.listen-address=127.0.0.1:" + port)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("prometheus.log").toFile())
            .start();
    try {
      PrometheusE2E.Prometheus prom = new PrometheusE2E.Prometheus(port);
      Poll.until(
          "Prometheus reading every member's agent, each ready",
          Duration.ofSeconds(60),
          () -> prom.query("count(etcd_member_agent_ready == 1)").toString().contains("\"3\""));
      long scraped = System.currentTimeMillis();
      Poll.until(
          "every rule evaluated twice on the scraped data",
          Duration.ofSeconds(30),
          () -> rulesEvaluatedSince(port, scraped + 2000));
      assertThat(prom.alerts())
          .as("no alert pending or firing on a healthy install: %s", what)
          .isEmpty();
      System.out.printf(
          "[node] a real Prometheus with the chart's %d rules: no alert on %s%n",
          PrometheusE2E.rules(PrometheusE2E.renderedRules()).size(), what);
    } finally {
      io.etcdmemberagent.testing.Processes.kill(prometheus);
    }
  }

  /** Whether every rule group's last evaluation is after {@code millis} (epoch). */
  private static boolean rulesEvaluatedSince(int port, long millis) {
    JsonObject rules =
        com.google.gson.JsonParser.parseString(
                io.etcdmemberagent.testing.Http.get(
                        "127.0.0.1", port, "/api/v1/rules", "application/json")
                    .body())
            .getAsJsonObject()
            .getAsJsonObject("data");
    var groups = rules.getAsJsonArray("groups");
    if (groups.isEmpty()) {
      return false;
    }
    for (JsonElement g : groups) {
      String last = g.getAsJsonObject().get("lastEvaluation").getAsString();
      if (java.time.Instant.parse(last).toEpochMilli() < millis) {
        return false;
      }
    }
    return true;
  }
}
