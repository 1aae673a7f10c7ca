package io.etcdmemberagent.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.etcdmemberagent.testing.KubeBinaries;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every object {@code helm template} renders, in each mode (cluster, sidecar), with TLS off and on,
 * with monitoring on, applied server-side to a real kube-apiserver of each end of the range the
 * chart claims (the oldest minor, {@link KubeBinaries#OLDEST}, and the node's, {@link
 * KubeBinaries#MINOR}): its validation and defaulting accept them and each object is then stored.
 * On both, the real StatefulSet controller then makes the default install's first Pod and its
 * claim, in a namespace that enforces the "restricted" Pod Security Standard, with every field the
 * chart set kept. The Prometheus operator's kinds (ServiceMonitor, PrometheusRule) are not applied:
 * their CRDs belong to the Prometheus operator and are not served here, so those documents are
 * counted and reported as skipped.
 */
class ChartOnApiServerIT {

  @TempDir static Path dir;
  static final Map<String, KubeControlPlane> PLANES = new HashMap<>();
  static final Pattern KIND = Pattern.compile("(?m)^kind: (\\S+)$");
  static final Pattern NAME = Pattern.compile("(?m)^metadata:\\n(?:  .*\\n)*?  name: (\\S+)$");

  static synchronized KubeControlPlane kube(String minor) {
    return PLANES.computeIfAbsent(
        minor, m -> KubeControlPlane.start(KubeBinaries.of(m), dir.resolve("kube-" + m)));
  }

  @AfterAll
  static void stop() {
    PLANES.values().forEach(KubeControlPlane::close);
  }

  static Stream<String> minors() {
    return Stream.of(KubeBinaries.OLDEST, KubeBinaries.MINOR);
  }

  @Test
  void theChartClaimsTheOldestMinorTestedHere() throws Exception {
    String chart = Files.readString(KubePods.CHART.resolve("Chart.yaml"));
    assertThat(chart)
        .as("Chart.yaml's kubeVersion starts at the oldest minor this test applies it to")
        .contains("kubeVersion: \">=" + KubeBinaries.OLDEST + ".0-0\"");
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
    List<Arguments> renders =
        List.of(
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
    return minors()
        .flatMap(minor -> renders.stream().map(r -> Arguments.of(minor, r.get()[0], r.get()[1])));
  }

  /** The release "etcd" in {@code namespace} as rendered for {@code kube}'s version. */
  private static TemplateCommand template(KubeControlPlane kube, String namespace) {
    return new Helm(KubePods.CHART)
        .template()
        .withName("etcd")
        .withNamespace(namespace)
        .withKubeVersion(kube.version().substring(1))
        .set("agent.https.secret", HelmChartTest.SERVING_SECRET);
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("variants")
  void everyRenderedObjectIsAcceptedByTheApiServer(
      String minor, String variant, UnaryOperator<TemplateCommand> values) throws Exception {
    KubeControlPlane kube = kube(minor);
    String namespace = "chart-" + variant;
    kube.createNamespace(namespace);
    String manifest = values.apply(template(kube, namespace)).call();
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
    String out =
        applyServerSide(kube, namespace, minor + "-" + variant, String.join("\n---\n", docs));
    System.out.printf(
        "%s on %s: %d objects applied server-side %s; skipped (Prometheus operator CRDs not served):"
            + " %s%n",
        variant, kube.version(), applied.size(), applied, skipped);
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

  @ParameterizedTest(name = "{0}")
  @MethodSource("minors")
  void theStatefulSetControllerMakesTheDefaultInstallsFirstPod(String minor) throws Exception {
    KubeControlPlane kube = kube(minor);
    String namespace = "pods";
    kube.createNamespace(namespace);
    kube.kubectl("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted");
    String manifest =
        template(kube, namespace)
            .set("persistentVolumeClaimRetentionPolicy.whenDeleted", "Delete")
            .call();
    applyServerSide(kube, namespace, minor + "-pods", manifest);
    kube.startControllerManager("statefulset");
    Poll.until(
        "etcd-0 made by " + minor + "'s StatefulSet controller",
        Duration.ofSeconds(60),
        () -> kube.admin().get("/api/v1/namespaces/" + namespace + "/pods/etcd-0").status() == 200);
    JsonObject spec =
        kube.admin()
            .getJson("/api/v1/namespaces/" + namespace + "/pods/etcd-0")
            .getAsJsonObject("spec");
    assertThat(spec.getAsJsonArray("readinessGates").toString())
        .as("the agent's gate kept on the Pod")
        .contains("etcd-member-agent.io/ready");
    JsonObject etcd =
        spec.getAsJsonArray("containers").asList().stream()
            .map(JsonElement::getAsJsonObject)
            .filter(c -> c.get("name").getAsString().equals("etcd"))
            .findFirst()
            .orElseThrow();
    assertThat(etcd.getAsJsonObject("lifecycle").getAsJsonObject("preStop").toString())
        .as("the hold on etcd's stop, over the agent's HTTPS")
        .contains("\"path\":\"/hold-etcd\"", "\"scheme\":\"HTTPS\"");
    // the controller makes the claim, then sets its owner in a later sync
    String claim = "/api/v1/namespaces/" + namespace + "/persistentvolumeclaims/data-etcd-0";
    Poll.until(
        "whenDeleted: Delete honoured: the StatefulSet owns its claim",
        Duration.ofSeconds(30),
        () ->
            kube.admin().get(claim).status() == 200
                && kube.admin().getJson(claim).getAsJsonObject("metadata").has("ownerReferences"));
    assertThat(
            kube.admin()
                .getJson(claim)
                .getAsJsonObject("metadata")
                .getAsJsonArray("ownerReferences")
                .toString())
        .contains("\"kind\":\"StatefulSet\"", "\"name\":\"etcd\"");
  }

  /** {@code kubectl apply --server-side} of {@code manifest} (kept as NAME.yaml); its output. */
  private static String applyServerSide(
      KubeControlPlane kube, String namespace, String name, String manifest) throws Exception {
    Path file = dir.resolve(name + ".yaml");
    Files.writeString(file, manifest);
    return kube.kubectl(
        "apply",
        "--server-side",
        "--field-manager=helm-test",
        "-n",
        namespace,
        "-f",
        file.toString());
  }

  @Test
  void theKubeadmStaticPodIsAValidPod() {
    KubeControlPlane kube = kube(KubeBinaries.MINOR);
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
