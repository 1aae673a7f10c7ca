package io.etcdmemberagent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.PrometheusBinaries;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's alerts, as the chart renders them, evaluated by Prometheus' own {@code promtool test
 * rules}: for every alert, series that make it fire (pending before its {@code for:}, firing after)
 * beside a healthy member's that must not, and that it clears once the cause is gone.
 */
class AlertRulesIT {

  /**
   * One alert's test: input series ({@code metric{labels} values}, promtool's notation, one sample
   * a minute), the sick member's labels of the firing alert, and when it is still pending, firing,
   * cleared (minutes).
   */
  record Case(
      String alert,
      List<String> series,
      Map<String, String> firingLabels,
      int pendingAt,
      int firingAt,
      int clearedAt) {}

  static final List<Case> CASES =
      List.of(
          new Case(
              "EtcdMemberLearnerStalled",
              List.of(
                  "etcd_member_agent_learner_stalled{pod=\"etcd-1\"} 0 1 1 1 0 0",
                  "etcd_member_agent_learner_stalled{pod=\"etcd-2\"} 0x5"),
              Map.of("pod", "etcd-1"),
              1,
              2,
              4),
          new Case(
              "EtcdMemberLearnerTooLong",
              List.of(
                  "etcd_member_agent_is_learner{pod=\"etcd-1\"} 1x34 0x5",
                  "etcd_member_agent_learner_stalled{pod=\"etcd-1\"} 0x39",
                  // a stalled learner is EtcdMemberLearnerStalled's, not this one's
                  "etcd_member_agent_is_learner{pod=\"etcd-2\"} 1x39",
                  "etcd_member_agent_learner_stalled{pod=\"etcd-2\"} 1x39"),
              Map.of("pod", "etcd-1"),
              20,
              31,
              36),
          new Case(
              "EtcdMemberNotReady",
              List.of(
                  "etcd_member_agent_ready{pod=\"etcd-1\"} 0x14 1x5",
                  "etcd_member_agent_ready{pod=\"etcd-2\"} 1x19"),
              Map.of("pod", "etcd-1"),
              5,
              11,
              16),
          new Case(
              "EtcdMemberOutOfSync",
              List.of(
                  "etcd_member_agent_is_voter{pod=\"etcd-1\"} 1x12",
                  "etcd_member_agent_check_passed{pod=\"etcd-1\",check=\"in-sync\"} 0x7 1x4",
                  // a learner catching up is not out of sync
                  "etcd_member_agent_is_voter{pod=\"etcd-2\"} 0x12",
                  "etcd_member_agent_check_passed{pod=\"etcd-2\",check=\"in-sync\"} 0x12"),
              Map.of("pod", "etcd-1"),
              3,
              6,
              9),
          new Case(
              "EtcdMemberNoLeader",
              List.of(
                  "etcd_member_agent_has_leader{pod=\"etcd-1\"} 0 0 0 1 1",
                  "etcd_member_agent_has_leader{pod=\"etcd-2\"} 1x4"),
              Map.of("pod", "etcd-1"),
              0,
              1,
              4),
          new Case(
              "EtcdMemberDown",
              List.of(
                  "etcd_member_agent_local_member_up{pod=\"etcd-1\"} 1 0 0 0 0 1 1",
                  "etcd_member_agent_local_member_up{pod=\"etcd-2\"} 1x6"),
              Map.of("pod", "etcd-1"),
              2,
              3,
              6),
          new Case(
              "EtcdMemberDiskUnhealthy",
              List.of(
                  "etcd_member_agent_disk_healthy{pod=\"etcd-1\"} 0x7 1x3",
                  "etcd_member_agent_disk_healthy{pod=\"etcd-2\"} 1x10"),
              Map.of("pod", "etcd-1"),
              3,
              5,
              8),
          new Case(
              "EtcdMemberFsyncSlow",
              List.of(
                  // etcd-1: two probes a minute, all between 100 and 500 ms, then all fast
                  "etcd_member_agent_fsync_probe_seconds_bucket{pod=\"etcd-1\",le=\"0.01\"}"
                      + " 0x25 0+2x15",
                  "etcd_member_agent_fsync_probe_seconds_bucket{pod=\"etcd-1\",le=\"0.1\"}"
                      + " 0x25 0+2x15",
                  "etcd_member_agent_fsync_probe_seconds_bucket{pod=\"etcd-1\",le=\"0.5\"}"
                      + " 0+2x25 52+2x15",
                  "etcd_member_agent_fsync_probe_seconds_bucket{pod=\"etcd-1\",le=\"+Inf\"}"
                      + " 0+2x25 52+2x15",
                  "etcd_member_agent_fsync_probe_seconds_bucket{pod=\"etcd-2\",le=\"0.01\"}"
                      + " 0+2x40",
                  "etcd_member_agent_fsync_probe_seconds_bucket{pod=\"etcd-2\",le=\"0.1\"}"
                      + " 0+2x40",
                  "etcd_member_agent_fsync_probe_seconds_bucket{pod=\"etcd-2\",le=\"0.5\"}"
                      + " 0+2x40",
                  "etcd_member_agent_fsync_probe_seconds_bucket{pod=\"etcd-2\",le=\"+Inf\"}"
                      + " 0+2x40"),
              Map.of("pod", "etcd-1"),
              10,
              17,
              40),
          new Case(
              "EtcdMemberAlarm",
              List.of(
                  "etcd_member_agent_alarm{pod=\"etcd-1\",type=\"NOSPACE\"} 1 1 1 0 0",
                  "etcd_member_agent_alarm{pod=\"etcd-2\",type=\"NOSPACE\"} 0x4"),
              Map.of("pod", "etcd-1", "type", "NOSPACE"),
              0,
              1,
              4),
          new Case(
              "EtcdMemberCertificateExpiresSoon",
              List.of(
                  // ten days after the test's start, renewed for years at 90 min
                  "etcd_member_agent_cert_expiry_timestamp_seconds{pod=\"etcd-1\",cert=\"peer\"}"
                      + " 864000x89 99999999x30",
                  "etcd_member_agent_cert_expiry_timestamp_seconds{pod=\"etcd-2\",cert=\"peer\"}"
                      + " 99999999x119"),
              Map.of("pod", "etcd-1", "cert", "peer"),
              30,
              61,
              91),
          new Case(
              "EtcdMemberPeerTlsProblem",
              List.of(
                  "etcd_member_agent_peer_tls_ok{pod=\"etcd-1\"} 0x20 1x5",
                  "etcd_member_agent_peer_tls_ok{pod=\"etcd-2\"} 1x25"),
              Map.of("pod", "etcd-1"),
              10,
              16,
              22),
          new Case(
              "EtcdMemberTlsReloadFailing",
              List.of(
                  // a failed reload every 10 s for 30 minutes, then fixed
                  "etcd_member_agent_tls_reloads_total{pod=\"etcd-1\",result=\"failure\"}"
                      + " 0+6x30 180x10",
                  "etcd_member_agent_tls_reloads_total{pod=\"etcd-2\",result=\"success\"} 0+1x40",
                  "etcd_member_agent_tls_reloads_total{pod=\"etcd-2\",result=\"failure\"} 0x40"),
              Map.of("pod", "etcd-1", "result", "failure"),
              5,
              12,
              41),
          new Case(
              "EtcdMemberAgentCannotPublish",
              List.of(
                  "etcd_member_agent_kube_pending{pod=\"etcd-1\"} 1x15 0x5",
                  "etcd_member_agent_kube_pending{pod=\"etcd-2\"} 0x20"),
              Map.of("pod", "etcd-1"),
              5,
              11,
              17),
          new Case(
              "EtcdMemberScaleDownBlocked",
              List.of(
                  "etcd_member_agent_scale_down_blocked{pod=\"etcd-0\"} 1x8 0x5",
                  "etcd_member_agent_scale_down_blocked{pod=\"etcd-1\"} 0x14"),
              Map.of("pod", "etcd-0"),
              3,
              6,
              11),
          new Case(
              "EtcdMemberRemovalFailing",
              List.of(
                  // a failed removal every minute for 12 minutes, then none
                  "etcd_member_agent_member_removals_total{pod=\"etcd-0\",reason=\"scale-down-catch-up\",result=\"failed\"} 0+1x12 12x12",
                  "etcd_member_agent_member_removals_total{pod=\"etcd-1\",reason=\"scale-down\",result=\"removed\"} 0+1x24"),
              Map.of("pod", "etcd-0", "reason", "scale-down-catch-up", "result", "failed"),
              3,
              8,
              20),
          new Case(
              "EtcdMemberSurplusVoter",
              List.of(
                  "etcd_member_agent_surplus_voters{pod=\"etcd-0\"} 2x20 0x5",
                  "etcd_member_agent_surplus_voters{pod=\"etcd-1\"} 0x25"),
              Map.of("pod", "etcd-0"),
              10,
              17,
              23));

  static final Pattern LABEL = Pattern.compile("\\{\\{ \\$labels\\.(\\w+) }}");

  @TempDir static Path dir;
  static List<Map<String, Object>> rules;

  @BeforeAll
  @SuppressWarnings("unchecked")
  static void renderTheChartsRules() throws IOException {
    Map<String, Object> rule =
        HelmChartTest.render(t -> t.set("monitoring.prometheusRule.enabled", true))
            .custom()
            .stream()
            .filter(m -> m.get("kind").equals("PrometheusRule"))
            .findFirst()
            .orElseThrow();
    Map<String, Object> spec = (Map<String, Object>) rule.get("spec");
    Files.writeString(dir.resolve("rules.yml"), Yaml.getSnakeYaml(null).dump(spec));
    rules = new ArrayList<>();
    for (Object g : (List<Object>) spec.get("groups")) {
      for (Object r : (List<Object>) ((Map<String, Object>) g).get("rules")) {
        rules.add((Map<String, Object>) r);
      }
    }
  }

  @Test
  void promtoolAcceptsTheRules() {
    Processes.Result check =
        Processes.run(
            PrometheusBinaries.promtool().toString(),
            "check",
            "rules",
            dir.resolve("rules.yml").toString());
    assertThat(check.exitCode()).as(check.output()).isZero();
    assertThat(check.output()).contains("SUCCESS: " + rules.size() + " rules found");
  }

  @Test
  void everyAlertIsTestedAndEveryTestPassesInPromtool() throws IOException {
    Set<String> tested = new TreeSet<>(CASES.stream().map(Case::alert).toList());
    Set<String> rendered = new TreeSet<>(rules.stream().map(r -> (String) r.get("alert")).toList());
    assertThat(tested).as("a promtool test for every alert the chart renders").isEqualTo(rendered);
    Path tests = dir.resolve("alerts_test.yml");
    Files.writeString(tests, Yaml.getSnakeYaml(null).dump(promtoolTests()));
    Processes.Result run =
        Processes.run(PrometheusBinaries.promtool().toString(), "test", "rules", tests.toString());
    System.out.println(run.output());
    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output()).contains("SUCCESS");
  }

  @Test
  void everyAlertHasARunbookInTheAlertsPage() throws IOException {
    String runbooks = Files.readString(Path.of("..", "docs", "alerts.md"));
    Set<String> anchors =
        runbooks
            .lines()
            .filter(l -> l.startsWith("#"))
            .map(
                l ->
                    l.replaceFirst("^#+\\s*", "")
                        .toLowerCase()
                        .replaceAll("[^a-z0-9 -]", "")
                        .replace(' ', '-'))
            .collect(Collectors.toSet());
    for (Map<String, Object> rule : rules) {
      String url = annotations(rule).get("runbook_url");
      assertThat(url).as("%s's runbook_url", rule.get("alert")).contains("docs/alerts.md#");
      assertThat(anchors)
          .as("a section of docs/alerts.md for %s", rule.get("alert"))
          .contains(url.substring(url.indexOf('#') + 1));
    }
  }

  /** promtool's test file: one test group per case, so each has its own series. */
  private static Map<String, Object> promtoolTests() {
    List<Object> groups = new ArrayList<>();
    for (Case c : CASES) {
      Map<String, Object> rule =
          rules.stream().filter(r -> r.get("alert").equals(c.alert())).findFirst().orElseThrow();
      Map<String, Object> labels = new LinkedHashMap<>(c.firingLabels());
      labels.putAll(ruleLabels(rule));
      Map<String, Object> firing = new LinkedHashMap<>();
      firing.put("exp_labels", labels);
      firing.put("exp_annotations", expanded(annotations(rule), c.firingLabels()));
      List<Object> series = new ArrayList<>();
      for (String s : c.series()) {
        int split = s.lastIndexOf('}') + 1;
        series.add(Map.of("series", s.substring(0, split), "values", s.substring(split).trim()));
      }
      groups.add(
          Map.of(
              "interval",
              "1m",
              "input_series",
              series,
              "alert_rule_test",
              List.of(
                  evaluation(c.alert(), c.pendingAt(), List.of()),
                  evaluation(c.alert(), c.firingAt(), List.of(firing)),
                  evaluation(c.alert(), c.clearedAt(), List.of()))));
    }
    Map<String, Object> file = new LinkedHashMap<>();
    file.put("rule_files", List.of("rules.yml"));
    file.put("evaluation_interval", "1m");
    file.put("tests", groups);
    return file;
  }

  private static Map<String, Object> evaluation(String alert, int minute, List<Object> expected) {
    return Map.of("eval_time", minute + "m", "alertname", alert, "exp_alerts", expected);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> annotations(Map<String, Object> rule) {
    return (Map<String, String>) rule.get("annotations");
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> ruleLabels(Map<String, Object> rule) {
    return (Map<String, String>) rule.get("labels");
  }

  /** The annotations as Prometheus fills them in for an alert with these labels. */
  private static Map<String, String> expanded(
      Map<String, String> annotations, Map<String, String> labels) {
    Map<String, String> out = new LinkedHashMap<>();
    annotations.forEach(
        (k, v) -> {
          Matcher m = LABEL.matcher(v);
          out.put(
              k, m.replaceAll(r -> Matcher.quoteReplacement(labels.getOrDefault(r.group(1), ""))));
        });
    return out;
  }
}
