package io.etcdmemberagent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every object {@code helm template} renders, in each mode (cluster, sidecar), with TLS off and on,
 * with monitoring on, applied server-side to a real kube-apiserver: its validation and defaulting
 * accept them and each object is then stored. The Prometheus operator's kinds (ServiceMonitor,
 * PrometheusRule) are not applied: their CRDs belong to the Prometheus operator and are not served
 * here, so those documents are counted and reported as skipped.
 */
class ChartOnApiServerIT {

  @TempDir static Path dir;
  static KubeControlPlane kube;
  static final Pattern KIND = Pattern.compile("(?m)^kind: (\\S+)$");
  static final Pattern NAME = Pattern.compile("(?m)^metadata:\\n(?:  .*\\n)*?  name: (\\S+)$");

  @BeforeAll
  static void controlPlane() {
    kube = KubeControlPlane.start(dir.resolve("kube"));
  }

  @AfterAll
  static void stop() {
    if (kube != null) {
      kube.close();
    }
  }

  static Stream<Arguments> variants() {
    UnaryOperator<TemplateCommand> tls =
        t ->
            t.set("tls.client.enabled", true)
                .set("tls.client.serverSecret", "etcd-server")
                .set("tls.client.agentSecret", "etcd-agent")
                .set("tls.peer.enabled", true)
                .set("tls.peer.secret", "etcd-peer-tls");
    UnaryOperator<TemplateCommand> monitoring =
        t ->
            t.set("monitoring.serviceMonitor.enabled", true)
                .set("monitoring.serviceMonitor.scraper.serviceAccount", "prometheus")
                .set("monitoring.serviceMonitor.scraper.namespace", "monitoring")
                .set("monitoring.prometheusRule.enabled", true)
                .set("monitoring.dashboard.enabled", true);
    return Stream.of(
        Arguments.of("cluster", (UnaryOperator<TemplateCommand>) t -> t),
        Arguments.of("cluster-tls", tls),
        Arguments.of(
            "cluster-tls-monitoring",
            (UnaryOperator<TemplateCommand>) t -> monitoring.apply(tls.apply(t))),
        Arguments.of(
            "sidecar-monitoring",
            (UnaryOperator<TemplateCommand>)
                t ->
                    monitoring.apply(
                        t.set("mode", "sidecar").set("sidecar.podSelector.app", "etcd"))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("variants")
  void everyRenderedObjectIsAcceptedByTheApiServer(
      String variant, UnaryOperator<TemplateCommand> values) throws Exception {
    String namespace = "chart-" + variant;
    kube.createNamespace(namespace);
    String manifest =
        values
            .apply(
                new Helm(KubePods.CHART)
                    .template()
                    .withName("etcd")
                    .withNamespace(namespace)
                    .withKubeVersion(kube.version().substring(1))
                    .set("agent.https.secret", HelmChartTest.SERVING_SECRET))
            .call();
    List<String> applied = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    List<String> docs = new ArrayList<>();
    for (String doc : manifest.split("(?m)^---\\s*$")) {
      Matcher kind = KIND.matcher(doc);
      if (!kind.find()) {
        continue;
      }
      Matcher name = NAME.matcher(doc);
      assertThat(name.find()).as("a name in %s", doc).isTrue();
      String id = kind.group(1) + "/" + name.group(1);
      if (doc.contains("apiVersion: monitoring.coreos.com/")) {
        skipped.add(id);
      } else {
        applied.add(id);
        docs.add(doc);
      }
    }
    Path file = dir.resolve(variant + ".yaml");
    Files.writeString(file, String.join("\n---\n", docs));
    String out =
        kube.kubectl(
            "apply",
            "--server-side",
            "--field-manager=helm-test",
            "-n",
            namespace,
            "-f",
            file.toString());
    System.out.printf(
        "%s: %d objects applied server-side %s; skipped (Prometheus operator CRDs not served): %s%n",
        variant, applied.size(), applied, skipped);
    for (String id : applied) {
      String stored = kube.kubectl("get", "-n", namespace, id, "-o", "name");
      assertThat(stored.trim().toLowerCase())
          .as("%s stored (apply said: %s)", id, out)
          .endsWith("/" + id.substring(id.indexOf('/') + 1).toLowerCase());
    }
    assertThat(applied).as("what the chart makes in %s", variant).isNotEmpty();
    if (variant.contains("monitoring")) {
      assertThat(skipped)
          .containsExactlyInAnyOrder(
              variant.startsWith("sidecar") ? "PodMonitor/etcd" : "ServiceMonitor/etcd",
              "PrometheusRule/etcd");
    } else {
      assertThat(skipped).isEmpty();
    }
    if (variant.startsWith("cluster")) {
      assertThat(applied).contains("StatefulSet/etcd", "Role/etcd-agent", "RoleBinding/etcd-agent");
    }
  }

  @Test
  void theKubeadmStaticPodIsAValidPod() {
    // what the controller manager would have made (the kubelet's mirror Pods skip this admission)
    kube.kubectl("create", "serviceaccount", "default", "-n", "kube-system");
    String out =
        kube.kubectl(
            "apply",
            "--dry-run=server",
            "-f",
            Path.of("..", "deploy", "kubeadm", "etcd-member-agent.yaml").toString());
    assertThat(out.trim()).isEqualTo("pod/etcd-member-agent created (server dry run)");
  }
}
