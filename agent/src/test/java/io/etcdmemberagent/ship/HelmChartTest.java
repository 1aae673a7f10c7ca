package io.etcdmemberagent.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1EnvVar;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1Role;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1StatefulSet;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart, linted and rendered with the real Helm library (helm-java), every rendered object
 * read back into client-java's models, and the wiring that matters asserted.
 */
class HelmChartTest {

  static final Path CHART = Path.of("..", "charts", "etcd-member-agent");

  /** Every rendered document: client-java models for built-in kinds, maps for CRDs. */
  record Rendered(List<KubernetesObject> objects, List<Map<String, Object>> custom) {

    <T extends KubernetesObject> List<T> all(Class<T> type) {
      return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    <T extends KubernetesObject> T one(Class<T> type) {
      List<T> found = all(type);
      assertThat(found).as(type.getSimpleName()).hasSize(1);
      return found.get(0);
    }

    List<String> kinds() {
      List<String> kinds = new ArrayList<>();
      objects.forEach(o -> kinds.add(o.getKind()));
      custom.forEach(m -> kinds.add(String.valueOf(m.get("kind"))));
      return kinds;
    }
  }

  /**
   * helm-java's template asks an API server for {@code lookup()} (helm's own CLI does not), so the
   * renders here name a serving Secret; the pair the chart generates is installed by the real helm
   * on the node (NodeTlsE2E and every test of the chart's defaults there).
   */
  static final String SERVING_SECRET = "etcd-serving";

  @SuppressWarnings("unchecked")
  static Rendered render(UnaryOperator<TemplateCommand> values) throws IOException {
    String manifest = values(values).call();
    List<KubernetesObject> objects = new ArrayList<>();
    List<Map<String, Object>> custom = new ArrayList<>();
    for (String doc : manifest.split("(?m)^---\\s*$")) {
      if (doc.lines().allMatch(l -> l.isBlank() || l.startsWith("#"))) {
        continue;
      }
      Map<String, Object> raw = Yaml.getSnakeYaml(null).load(doc);
      String apiVersion = String.valueOf(raw.get("apiVersion"));
      if (apiVersion.startsWith("monitoring.coreos.com/")) {
        custom.add(raw);
      } else {
        objects.add((KubernetesObject) Yaml.load(doc));
      }
    }
    return new Rendered(objects, custom);
  }

  static V1PodSpec pod(Rendered r) {
    return r.one(V1StatefulSet.class).getSpec().getTemplate().getSpec();
  }

  static V1Container container(List<V1Container> containers, String name) {
    return containers.stream().filter(c -> c.getName().equals(name)).findFirst().orElseThrow();
  }

  static String env(V1Container c, String name) {
    return c.getEnv().stream()
        .filter(e -> e.getName().equals(name))
        .map(V1EnvVar::getValue)
        .filter(Objects::nonNull)
        .findFirst()
        .orElse(null);
  }

  @Test
  void lintPasses() {
    LintResult result = new Helm(CHART).lint().strict().call();
    assertThat(result.isFailed()).as(String.join("\n", result.getMessages())).isFalse();
  }

  @Test
  void theDefaultsDeployAWorkingClusterWiring() throws IOException {
    Rendered r = render(t -> t);
    assertThat(r.kinds())
        .containsExactlyInAnyOrder(
            "ServiceAccount",
            "Role",
            "Role",
            "RoleBinding",
            "ClusterRoleBinding",
            "Service",
            "Service",
            "PodDisruptionBudget",
            "NetworkPolicy",
            "ConfigMap",
            "StatefulSet");
    V1StatefulSet sts = r.one(V1StatefulSet.class);
    assertThat(sts.getSpec().getReplicas()).isEqualTo(3);
    assertThat(sts.getSpec().getServiceName()).isEqualTo("etcd-peer");
    V1PodSpec pod = pod(r);
    assertThat(pod.getEnableServiceLinks())
        .as("no ETCD_MEMBER_AGENT_* variables from Services named like the prefix")
        .isFalse();
    assertThat(pod.getReadinessGates())
        .extracting(g -> g.getConditionType())
        .containsExactly("etcd-member-agent.io/ready");

    V1Service peer =
        r.all(V1Service.class).stream()
            .filter(s -> s.getMetadata().getName().equals("etcd-peer"))
            .findFirst()
            .orElseThrow();
    V1Service client =
        r.all(V1Service.class).stream()
            .filter(s -> s.getMetadata().getName().equals("etcd-client"))
            .findFirst()
            .orElseThrow();
    assertThat(peer.getSpec().getClusterIP()).isEqualTo("None");
    assertThat(peer.getSpec().getPublishNotReadyAddresses()).isTrue();
    assertThat(client.getSpec().getPublishNotReadyAddresses()).isNotEqualTo(Boolean.TRUE);

    V1Container etcd = container(pod.getContainers(), "etcd");
    V1Container agent = container(pod.getContainers(), "agent");
    V1Container join = container(pod.getInitContainers(), "join");
    assertThat(etcd.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(etcd.getReadinessProbe().getHttpGet().getPort().getIntValue())
        .as("by number: the kubelet looks a named port up in the probed container's ports only")
        .isEqualTo(9379);
    assertThat(etcd.getPorts())
        .as("a named probe port must be the probed container's own")
        .noneMatch(p -> "agent-http".equals(p.getName()));
    for (V1Container c : List.of(etcd, agent)) {
      for (var probe :
          Stream.of(c.getReadinessProbe(), c.getLivenessProbe(), c.getStartupProbe())
              .filter(Objects::nonNull)
              .toList()) {
        var port = probe.getHttpGet().getPort();
        if (!port.isInteger()) {
          assertThat(c.getPorts())
              .as("%s's probe port %s is declared by %s itself", c.getName(), port, c.getName())
              .anySatisfy(p -> assertThat(p.getName()).isEqualTo(port.getStrValue()));
        }
      }
    }
    assertThat(agent.getPorts()).anySatisfy(p -> assertThat(p.getName()).isEqualTo("agent-http"));
    assertThat(agent.getPorts().get(0).getContainerPort()).isEqualTo(9379);
    assertThat(etcd.getLivenessProbe().getHttpGet().getPath())
        .as("liveness never depends on quorum")
        .isEqualTo("/livez");
    assertThat(etcd.getLivenessProbe().getHttpGet().getPort().getStrValue())
        .isEqualTo("etcd-metrics");
    assertThat(agent.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/livez");
    assertThat(etcd.getCommand())
        .containsExactly("etcd", "--config-file=/var/lib/etcd/etcd.conf.yml");
    assertThat(join.getArgs()).containsExactly("join");
    assertThat(agent.getArgs()).containsExactly("run");
    assertThat(env(join, "ETCD_MEMBER_AGENT_ETCD_CONFIG_FILE"))
        .isEqualTo("/var/lib/etcd/etcd.conf.yml");
    assertThat(env(join, "ETCD_MEMBER_AGENT_PEER_URLS"))
        .isEqualTo("https://$(POD_NAME).etcd-peer.$(POD_NAMESPACE).svc:2380")
        .isEqualTo(env(agent, "ETCD_MEMBER_AGENT_PEER_URLS"));
    assertThat(env(join, "ETCD_MEMBER_AGENT_CLUSTER_ENDPOINTS"))
        .isEqualTo("https://etcd-client.$(POD_NAMESPACE).svc:2379");
    assertThat(env(join, "ETCD_MEMBER_AGENT_BOOTSTRAP_MEMBER")).isEqualTo("etcd-0");
    assertThat(env(agent, "ETCD_MEMBER_AGENT_DATA_DIR"))
        .isEqualTo(env(join, "ETCD_MEMBER_AGENT_DATA_DIR"))
        .isEqualTo("/var/lib/etcd/data");
    assertThat(env(agent, "ETCD_MEMBER_AGENT_QUOTA_BACKEND_BYTES")).isEqualTo("2147483648");
    assertThat(env(agent, "ETCD_MEMBER_AGENT_PEER_TLS_REQUIRED"))
        .as("peer TLS on by default, and required")
        .isNull();
    assertThat(
            env(
                container(
                    pod(render(t -> t.set("tls.peer.enabled", false))).getContainers(), "agent"),
                "ETCD_MEMBER_AGENT_PEER_TLS_REQUIRED"))
        .as("plain peer traffic chosen in the values is not a peer-tls problem")
        .isEqualTo("false");
    assertThat(agent.getEnv().get(0).getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.name");

    String config = r.one(V1ConfigMap.class).getData().get("etcd.conf.yml");
    Map<String, Object> etcdConfig = Yaml.getSnakeYaml(null).load(config);
    assertThat(etcdConfig)
        .containsEntry("listen-client-urls", "https://0.0.0.0:2379")
        .containsEntry("listen-peer-urls", "https://0.0.0.0:2380")
        .containsEntry("listen-metrics-urls", "http://0.0.0.0:2381")
        .containsEntry("quota-backend-bytes", 2147483648L)
        .containsEntry("auto-compaction-retention", "1h")
        .doesNotContainKeys("name", "initial-cluster");
    Map<String, Object> plain =
        Yaml.getSnakeYaml(null)
            .load(
                render(t -> t.set("tls.peer.enabled", false).set("tls.client.enabled", false))
                    .one(V1ConfigMap.class)
                    .getData()
                    .get("etcd.conf.yml"));
    assertThat(plain)
        .as("switching back to plain HTTP is the two enabled values")
        .containsEntry("listen-client-urls", "http://0.0.0.0:2379")
        .containsEntry("listen-peer-urls", "http://0.0.0.0:2380")
        .doesNotContainKeys("client-transport-security", "peer-transport-security");
  }

  /**
   * The default TLS: join issues each member's certificates into a memory-backed emptyDir from the
   * CA kept in the Secret etcd-ca, which no render contains (join creates it once); etcd reads its
   * pairs there, the agent its client pair and the peer certificate without the key, and
   * applications find theirs in the Secret etcd-client-tls.
   */
  @Test
  void theDefaultTlsIsIssuedByJoinFromACaNoRenderContains() throws IOException {
    Rendered r = render(t -> t);
    assertThat(r.all(V1Secret.class))
        .as("a CA generated in the template would change at every render (helm template, Argo CD)")
        .noneMatch(sec -> sec.getMetadata().getName().contains("-ca"));
    V1PodSpec pod = pod(r);
    V1Container join = container(pod.getInitContainers(), "join");
    V1Container etcd = container(pod.getContainers(), "etcd");
    V1Container agent = container(pod.getContainers(), "agent");
    assertThat(env(join, "ETCD_MEMBER_AGENT_GENERATE_TLS_DIR"))
        .isEqualTo("/etc/etcd/tls-generated");
    assertThat(env(join, "ETCD_MEMBER_AGENT_TLS_CA_SECRET")).isEqualTo("etcd-ca");
    assertThat(env(join, "ETCD_MEMBER_AGENT_TLS_CLIENT_SECRET")).isEqualTo("etcd-client-tls");
    assertThat(env(join, "ETCD_MEMBER_AGENT_TLS_SERVER_NAMES"))
        .isEqualTo("etcd-client,etcd-client.$(POD_NAMESPACE),etcd-client.$(POD_NAMESPACE).svc");
    assertThat(env(join, "ETCD_MEMBER_AGENT_CACERT"))
        .as("join uses the client pair it issues, not files given to it")
        .isNull();
    assertThat(env(agent, "ETCD_MEMBER_AGENT_CERT"))
        .isEqualTo("/etc/etcd-member-agent/tls/client/tls.crt");
    var volume =
        pod.getVolumes().stream()
            .filter(v -> v.getName().equals("generated-tls"))
            .findFirst()
            .orElseThrow();
    assertThat(volume.getEmptyDir().getMedium()).isEqualTo("Memory");
    assertThat(join.getVolumeMounts())
        .anySatisfy(
            m -> {
              assertThat(m.getName()).isEqualTo("generated-tls");
              assertThat(m.getReadOnly()).isNotEqualTo(Boolean.TRUE);
            });
    assertThat(etcd.getVolumeMounts())
        .anySatisfy(
            m -> {
              assertThat(m.getName()).isEqualTo("generated-tls");
              assertThat(m.getReadOnly()).isTrue();
            });
    assertThat(agent.getVolumeMounts())
        .filteredOn(m -> m.getName().equals("generated-tls"))
        .extracting(m -> m.getSubPath())
        .as("the agent mounts its client pair and the peer certificate, never the peer key")
        .containsExactlyInAnyOrder("client", "peer-public");
    Map<String, Object> config =
        Yaml.getSnakeYaml(null).load(r.one(V1ConfigMap.class).getData().get("etcd.conf.yml"));
    assertThat(config.get("peer-transport-security").toString())
        .contains("cert-file=/etc/etcd/tls-generated/peer/tls.crt", "client-cert-auth=true");
    assertThat(config.get("client-transport-security").toString())
        .contains("cert-file=/etc/etcd/tls-generated/server/tls.crt", "client-cert-auth=true");
    assertThat(agentRole(r).getRules())
        .filteredOn(rule -> rule.getResources().contains("secrets"))
        .extracting(V1PolicyRule::getVerbs, V1PolicyRule::getResourceNames)
        .containsExactlyInAnyOrder(
            tuple(List.of("get"), List.of("etcd-ca", "etcd-client-tls")),
            tuple(List.of("update"), List.of("etcd-client-tls")),
            tuple(List.of("create"), List.of()));
    assertThat(
            agentRole(
                    render(t -> t.set("tls.peer.enabled", false).set("tls.client.enabled", false)))
                .getRules())
        .as("plain etcd: no Secret permission")
        .noneMatch(rule -> rule.getResources().contains("secrets"));
  }

  @Test
  void etcdIsHeldUntilItsMemberIsSettledWithinTheGracePeriod() throws IOException {
    V1PodSpec pod = pod(render(t -> t));
    V1Container etcd = container(pod.getContainers(), "etcd");
    V1Container agent = container(pod.getContainers(), "agent");
    var hold = etcd.getLifecycle().getPreStop().getHttpGet();
    assertThat(hold.getPath()).isEqualTo("/hold-etcd");
    assertThat(hold.getPort().getIntValue()).as("the agent's port, by number").isEqualTo(9379);
    assertThat(hold.getScheme()).isEqualTo("HTTPS");
    assertThat(agent.getLifecycle()).as("the agent itself is not held").isNull();
    assertThat(env(agent, "ETCD_MEMBER_AGENT_REMOVE_SURPLUS_MEMBERS"))
        .as("cluster mode has join, so a removed member's volume joins again")
        .isEqualTo("true");
    long budget =
        Long.parseLong(env(agent, "ETCD_MEMBER_AGENT_SCALE_DOWN_BUDGET").replace("s", ""));
    assertThat(pod.getTerminationGracePeriodSeconds())
        .as("budget + etcd's stop + the kubelet's 2 s")
        .isGreaterThanOrEqualTo(budget + 10 + 2);

    assertThat(
            container(
                    pod(render(t -> t.set("agent.https.enabled", false).set("agent.authz", "off")))
                        .getContainers(),
                    "etcd")
                .getLifecycle()
                .getPreStop()
                .getHttpGet()
                .getScheme())
        .isEqualTo("HTTP");
    assertThat(
            container(
                    pod(render(t -> t.set("agent.removeSurplusMembers", false))).getContainers(),
                    "etcd")
                .getLifecycle())
        .as("no removal, no hold")
        .isNull();
    assertThat(
            pod(render(
                    t ->
                        t.set("agent.scaleDownBudget", "1m30s")
                            .set("terminationGracePeriodSeconds", 102)))
                .getTerminationGracePeriodSeconds())
        .isEqualTo(102);
    assertThatThrownBy(
            () ->
                render(
                    t ->
                        t.set("agent.scaleDownBudget", "1m30s")
                            .set("terminationGracePeriodSeconds", 101)))
        .hasMessageContaining(
            "terminationGracePeriodSeconds=101 does not fit etcd's hold: agent.scaleDownBudget 90s"
                + " + etcd.stopSeconds 10s + the kubelet's minimum 2s = 102s");
    assertThatThrownBy(() -> render(t -> t.set("agent.scaleDownBudget", "500ms")))
        .hasMessageContaining("scaleDownBudget");
    assertThatThrownBy(() -> render(t -> t.set("ordinals.start", 2)))
        .as("the chart's Pods count from 0: <release>-0 bootstraps")
        .hasMessageContaining("ordinals");
    assertThatThrownBy(() -> values(t -> t.withKubeVersion("1.34.4")).call())
        .as("the chart claims the minors upstream still patches, from 1.35")
        .hasMessageContaining("kubeVersion");
  }

  /** The chart with this test's release, namespace and serving Secret, not yet rendered. */
  static TemplateCommand values(UnaryOperator<TemplateCommand> values) {
    return values.apply(
        new Helm(CHART)
            .template()
            .withName("etcd")
            .withNamespace("db")
            .withKubeVersion("1.36.3")
            .set("agent.https.secret", SERVING_SECRET));
  }

  @Test
  void everyContainerMeetsTheRestrictedPodSecurityStandard() throws IOException {
    for (Rendered r :
        List.of(
            render(t -> t),
            render(
                t ->
                    t.set("tls.client.enabled", true)
                        .set("tls.client.serverSecret", "s")
                        .set("tls.client.agentSecret", "a")
                        .set("tls.peer.enabled", true)
                        .set("tls.peer.secret", "p")))) {
      V1PodSpec pod = pod(r);
      assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
      assertThat(pod.getSecurityContext().getSeccompProfile().getType())
          .isEqualTo("RuntimeDefault");
      List<V1Container> all = new ArrayList<>(pod.getContainers());
      all.addAll(pod.getInitContainers());
      assertThat(all).hasSize(3);
      for (V1Container c : all) {
        V1SecurityContext s = c.getSecurityContext();
        assertThat(s.getAllowPrivilegeEscalation()).as(c.getName()).isFalse();
        assertThat(s.getRunAsNonRoot()).as(c.getName()).isTrue();
        assertThat(s.getReadOnlyRootFilesystem()).as(c.getName()).isTrue();
        assertThat(s.getCapabilities().getDrop()).as(c.getName()).containsExactly("ALL");
        assertThat(s.getSeccompProfile().getType()).as(c.getName()).isEqualTo("RuntimeDefault");
        assertThat(s.getPrivileged()).as(c.getName()).isNotEqualTo(Boolean.TRUE);
        assertThat(c.getResources().getRequests()).as(c.getName()).containsKeys("cpu", "memory");
      }
    }
  }

  /** The agent's own Role (beside the metrics-reader Role of {@code --authz=kube}). */
  static V1Role agentRole(Rendered r) {
    return r.all(V1Role.class).stream()
        .filter(x -> !x.getMetadata().getName().endsWith("-metrics-reader"))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void rbacIsTheMinimumTheAgentCalls() throws IOException {
    V1Role role =
        agentRole(render(t -> t.set("tls.peer.enabled", false).set("tls.client.enabled", false)));
    assertThat(role.getRules())
        .extracting(V1PolicyRule::getApiGroups, V1PolicyRule::getResources, V1PolicyRule::getVerbs)
        .containsExactlyInAnyOrder(
            tuple(List.of(""), List.of("pods"), List.of("get")),
            tuple(List.of(""), List.of("pods/status"), List.of("patch")),
            tuple(List.of("apps"), List.of("statefulsets"), List.of("get")),
            tuple(List.of(""), List.of("events"), List.of("create")),
            tuple(
                List.of("etcd-member-agent.io"), List.of("etcdmembers"), List.of("get", "create")),
            tuple(
                List.of("etcd-member-agent.io"), List.of("etcdmembers/status"), List.of("patch")));
    V1Role without = agentRole(render(t -> t.set("agent.memberResource", "off")));
    assertThat(without.getRules())
        .as("--member-resource=off needs no EtcdMember permission")
        .allSatisfy(rule -> assertThat(rule.getApiGroups()).containsAnyOf("", "apps"))
        .noneMatch(rule -> rule.getResources().stream().anyMatch(r -> r.startsWith("etcdmembers")));
    V1Role otherGroup = agentRole(render(t -> t.set("agent.conditionPrefix", "etcd.example.com")));
    assertThat(otherGroup.getRules())
        .extracting(V1PolicyRule::getApiGroups)
        .contains(List.of("etcd.example.com"));
  }

  @Test
  void theCrdShipsInTheChartAndAsPlainYamlAlike() throws IOException {
    String name = "etcdmembers.etcd-member-agent.io.yaml";
    assertThat(java.nio.file.Files.readString(CHART.resolve("crds").resolve(name)))
        .isEqualTo(
            java.nio.file.Files.readString(CHART.resolve("../../deploy/crds").resolve(name)));
  }

  @Test
  void tlsMountsSecretsAndSwitchesEverySchemeToHttps() throws IOException {
    Rendered r =
        render(
            t ->
                t.set("tls.client.enabled", true)
                    .set("tls.client.serverSecret", "etcd-server")
                    .set("tls.client.agentSecret", "etcd-agent")
                    .set("tls.peer.enabled", true)
                    .set("tls.peer.secret", "etcd-peer-tls"));
    V1PodSpec pod = pod(r);
    V1Container agent = container(pod.getContainers(), "agent");
    V1Container etcd = container(pod.getContainers(), "etcd");
    V1Container join = container(pod.getInitContainers(), "join");
    assertThat(env(agent, "ETCD_MEMBER_AGENT_ETCD_ENDPOINT"))
        .isEqualTo("https://$(POD_NAME).etcd-peer.$(POD_NAMESPACE).svc:2379");
    assertThat(env(join, "ETCD_MEMBER_AGENT_PEER_URLS")).startsWith("https://");
    for (V1Container c : List.of(agent, join)) {
      assertThat(env(c, "ETCD_MEMBER_AGENT_CERT"))
          .isEqualTo("/etc/etcd-member-agent/tls/client/tls.crt");
      assertThat(env(c, "ETCD_MEMBER_AGENT_KEY"))
          .isEqualTo("/etc/etcd-member-agent/tls/client/tls.key");
    }
    assertThat(env(agent, "ETCD_MEMBER_AGENT_PEER_CACERT"))
        .isEqualTo("/etc/etcd-member-agent/tls/peer/ca.crt");
    assertThat(env(agent, "ETCD_MEMBER_AGENT_PEER_TLS_REQUIRED"))
        .as("required by default")
        .isNull();
    assertThat(etcd.getVolumeMounts())
        .extracting(m -> m.getMountPath())
        .contains("/etc/etcd/tls/server", "/etc/etcd/tls/peer");
    var peerPublic =
        pod.getVolumes().stream()
            .filter(v -> v.getName().equals("peer-public"))
            .findFirst()
            .orElseThrow();
    assertThat(peerPublic.getSecret().getItems())
        .as("the agent never sees the peer key")
        .extracting(i -> i.getKey())
        .containsExactlyInAnyOrder("ca.crt", "tls.crt");
    Map<String, Object> config =
        Yaml.getSnakeYaml(null).load(r.one(V1ConfigMap.class).getData().get("etcd.conf.yml"));
    assertThat(config).containsEntry("listen-peer-urls", "https://0.0.0.0:2380");
    assertThat(config.get("client-transport-security").toString())
        .contains("client-cert-auth=true");
    assertThat(config.get("peer-transport-security").toString()).contains("client-cert-auth=true");
  }

  @Test
  void theTokenIsProjectedOnlyIntoTheContainersThatCallTheApiServer() throws IOException {
    V1PodSpec pod = pod(render(t -> t));
    assertThat(pod.getAutomountServiceAccountToken()).isFalse();
    String tokenPath = "/var/run/secrets/kubernetes.io/serviceaccount";
    for (V1Container c :
        List.of(
            container(pod.getContainers(), "agent"), container(pod.getInitContainers(), "join"))) {
      assertThat(c.getVolumeMounts())
          .as(c.getName())
          .anyMatch(m -> m.getMountPath().equals(tokenPath));
    }
    assertThat(container(pod.getContainers(), "etcd").getVolumeMounts())
        .noneMatch(m -> m.getMountPath().startsWith("/var/run/secrets"));
    var access =
        pod.getVolumes().stream()
            .filter(v -> v.getName().equals("kube-api-access"))
            .findFirst()
            .orElseThrow()
            .getProjected();
    assertThat(access.getSources())
        .as("what automounting gives: a token, the cluster CA, the namespace")
        .hasSize(3);
  }

  @Test
  @SuppressWarnings("unchecked")
  void secureServingIsTheDefaultWithHttpsProbesAndExactlyTheReviews() throws IOException {
    V1PodSpec plain =
        pod(render(t -> t.set("agent.https.enabled", false).set("agent.authz", "off")));
    assertThat(env(container(plain.getContainers(), "agent"), "ETCD_MEMBER_AGENT_AUTHZ"))
        .isEqualTo("off");
    assertThat(
            container(plain.getContainers(), "etcd").getReadinessProbe().getHttpGet().getScheme())
        .isEqualTo("HTTP");
    Rendered defaults = render(t -> t);
    V1PodSpec byDefault = pod(defaults);
    assertThat(env(container(byDefault.getContainers(), "agent"), "ETCD_MEMBER_AGENT_AUTHZ"))
        .isEqualTo("kube");
    assertThat(
            container(byDefault.getContainers(), "etcd")
                .getReadinessProbe()
                .getHttpGet()
                .getScheme())
        .isEqualTo("HTTPS");
    Rendered r =
        render(
            t ->
                t.set("agent.https.secret", "from-cert-manager")
                    .set("monitoring.serviceMonitor.enabled", true)
                    .set("monitoring.serviceMonitor.scraper.serviceAccount", "prometheus-k8s")
                    .set("monitoring.serviceMonitor.scraper.namespace", "monitoring"));
    V1PodSpec pod = pod(r);
    V1Container agent = container(pod.getContainers(), "agent");
    V1Container etcd = container(pod.getContainers(), "etcd");
    assertThat(etcd.getReadinessProbe().getHttpGet().getScheme()).isEqualTo("HTTPS");
    assertThat(
            Stream.of(agent.getReadinessProbe(), agent.getLivenessProbe(), agent.getStartupProbe())
                .map(p -> p.getHttpGet().getScheme()))
        .containsOnly("HTTPS");
    assertThat(env(agent, "ETCD_MEMBER_AGENT_AUTHZ")).isEqualTo("kube");
    assertThat(env(agent, "ETCD_MEMBER_AGENT_HTTPS_CERT_FILE"))
        .isEqualTo("/etc/etcd-member-agent/tls/serving/tls.crt");
    var serving =
        pod.getVolumes().stream()
            .filter(v -> v.getName().equals("agent-serving"))
            .findFirst()
            .orElseThrow()
            .getSecret();
    assertThat(serving.getSecretName()).isEqualTo("from-cert-manager");
    assertThat(serving.getDefaultMode()).isEqualTo(0440);
    assertThat(r.all(io.kubernetes.client.openapi.models.V1Secret.class))
        .as("no generated pair beside the user's")
        .noneMatch(x -> x.getMetadata().getName().endsWith("agent-serving"));
    var delegation =
        r.all(io.kubernetes.client.openapi.models.V1ClusterRoleBinding.class).stream()
            .filter(b -> b.getRoleRef().getName().equals("system:auth-delegator"))
            .findFirst()
            .orElseThrow();
    assertThat(delegation.getSubjects()).extracting(s -> s.getName()).containsExactly("etcd");
    assertThat(r.all(io.kubernetes.client.openapi.models.V1ClusterRole.class))
        .as("nothing cluster-wide for readers by default")
        .isEmpty();
    var reader =
        r.all(io.kubernetes.client.openapi.models.V1Role.class).stream()
            .filter(x -> x.getMetadata().getName().equals("etcd-metrics-reader"))
            .findFirst()
            .orElseThrow();
    assertThat(reader.getRules())
        .singleElement()
        .satisfies(
            rule -> {
              assertThat(rule.getApiGroups()).containsExactly("etcd-member-agent.io");
              assertThat(rule.getResources())
                  .containsExactly("etcdmembers/metrics", "etcdmembers/status");
              assertThat(rule.getVerbs()).containsExactly("get");
            });
    assertThat(env(agent, "ETCD_MEMBER_AGENT_AUTHZ_ATTRIBUTES")).isEqualTo("resource");
    var scraper =
        r.all(io.kubernetes.client.openapi.models.V1RoleBinding.class).stream()
            .filter(b -> b.getMetadata().getName().equals("etcd-metrics-reader-scraper"))
            .findFirst()
            .orElseThrow();
    assertThat(scraper.getRoleRef().getName()).isEqualTo("etcd-metrics-reader");
    assertThat(scraper.getSubjects())
        .singleElement()
        .satisfies(
            x -> {
              assertThat(x.getName()).isEqualTo("prometheus-k8s");
              assertThat(x.getNamespace()).isEqualTo("monitoring");
            });
    assertThat(r.all(io.kubernetes.client.openapi.models.V1Secret.class))
        .as("no legacy, non-expiring token Secret")
        .isEmpty();
    Map<String, Object> monitor =
        r.custom().stream()
            .filter(m -> m.get("kind").equals("ServiceMonitor"))
            .findFirst()
            .orElseThrow();
    Map<String, Object> endpoint =
        ((List<Map<String, Object>>) ((Map<String, Object>) monitor.get("spec")).get("endpoints"))
            .get(0);
    assertThat(endpoint)
        .containsEntry("scheme", "https")
        .containsEntry("bearerTokenFile", "/var/run/secrets/kubernetes.io/serviceaccount/token")
        .doesNotContainKey("authorization");
    Map<String, Object> tls = (Map<String, Object>) endpoint.get("tlsConfig");
    assertThat(tls).as("verified, not skipped").doesNotContainKey("insecureSkipVerify");
    assertThat(tls.get("ca").toString()).contains("from-cert-manager", "ca.crt");
    assertThat(tls).containsEntry("serverName", "metrics.etcd-peer.db.svc");
    assertThatThrownBy(
            () ->
                render(
                    t ->
                        t.set("agent.https.secret", "x")
                            .set("monitoring.serviceMonitor.enabled", true)))
        .hasMessageContaining("monitoring.serviceMonitor.scraper.serviceAccount is required");

    Rendered nonResource =
        render(t -> t.set("agent.https.secret", "x").set("agent.authzAttributes", "non-resource"));
    var clusterReader = nonResource.one(io.kubernetes.client.openapi.models.V1ClusterRole.class);
    assertThat(clusterReader.getMetadata().getName()).isEqualTo("db-etcd-metrics-reader");
    assertThat(clusterReader.getRules().get(0).getNonResourceURLs())
        .containsExactly("/metrics", "/status");
    assertThatThrownBy(() -> render(t -> t.set("agent.https.enabled", false)))
        .hasMessageContaining("agent.authz=kube needs agent.https.enabled=true");
  }

  @Test
  void theNetworkPolicyIsOnByDefaultKeepsThePeerPortToMembersAndAdmitsClientsAndScrapers()
      throws IOException {
    var open = render(t -> t).one(io.kubernetes.client.openapi.models.V1NetworkPolicy.class);
    var defaults = open.getSpec().getIngress();
    assertThat(defaults).hasSize(3);
    assertThat(defaults.get(0).getFrom()).as("members only").hasSize(1);
    assertThat(defaults.get(0).getPorts())
        .extracting(p -> p.getPort().toString())
        .containsExactly("2380", "2379");
    assertThat(defaults.get(1).getFrom())
        .as("applications reach the client port from anywhere by default")
        .isNullOrEmpty();
    assertThat(defaults.get(1).getPorts())
        .extracting(p -> p.getPort().toString())
        .containsExactly("2379");
    assertThat(defaults.get(2).getFrom()).isNullOrEmpty();
    assertThat(render(t -> t.set("networkPolicy.enabled", false)).kinds())
        .doesNotContain("NetworkPolicy");
    var policy =
        render(
                t ->
                    t.set("networkPolicy.clients[0].podSelector.matchLabels.app", "api")
                        .set(
                            "networkPolicy.scrapers[0].namespaceSelector.matchLabels.name",
                            "monitoring"))
            .one(io.kubernetes.client.openapi.models.V1NetworkPolicy.class);
    var rules = policy.getSpec().getIngress();
    assertThat(rules).hasSize(3);
    assertThat(rules.get(0).getPorts())
        .extracting(p -> p.getPort().toString())
        .containsExactly("2380", "2379");
    assertThat(rules.get(1).getFrom().get(0).getPodSelector().getMatchLabels())
        .containsEntry("app", "api");
    assertThat(rules.get(1).getPorts())
        .extracting(p -> p.getPort().toString())
        .containsExactly("2379");
    assertThat(rules.get(2).getPorts())
        .extracting(p -> p.getPort().toString())
        .containsExactly("9379", "2381");
  }

  @Test
  @SuppressWarnings("unchecked")
  void sidecarModeRendersOnlyRbacAndMonitoringWithAPodMonitorOnTheUsersPods() throws IOException {
    Rendered r =
        render(
            t ->
                t.set("mode", "sidecar")
                    .set("monitoring.serviceMonitor.enabled", true)
                    .set("monitoring.serviceMonitor.scraper.serviceAccount", "prometheus")
                    .set("monitoring.prometheusRule.enabled", true)
                    .set("sidecar.podSelector.app", "etcd"));
    assertThat(r.kinds())
        .as("the agent's and the scraper's RBAC, monitoring; no Service, so a PodMonitor")
        .containsOnly(
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "ClusterRoleBinding",
            "PodMonitor",
            "PrometheusRule");
    Map<String, Object> spec =
        (Map<String, Object>)
            r.custom().stream()
                .filter(m -> m.get("kind").equals("PodMonitor"))
                .findFirst()
                .orElseThrow()
                .get("spec");
    assertThat(spec.get("selector").toString()).isEqualTo("{matchLabels={app=etcd}}");
    assertThat(((List<Map<String, Object>>) spec.get("podMetricsEndpoints")).get(0))
        .containsEntry("port", "agent-http");
    assertThatThrownBy(
            () ->
                render(
                    t ->
                        t.set("mode", "sidecar")
                            .set("monitoring.serviceMonitor.enabled", true)
                            .set("monitoring.serviceMonitor.scraper.serviceAccount", "p")))
        .hasMessageContaining("sidecar.podSelector is required");
  }

  @Test
  @SuppressWarnings("unchecked")
  void monitoringAddsServiceMonitorAlertsAndADashboard() throws IOException {
    Rendered r =
        render(
            t ->
                t.set("monitoring.serviceMonitor.enabled", true)
                    .set("monitoring.serviceMonitor.scraper.serviceAccount", "prometheus")
                    .set("monitoring.prometheusRule.enabled", true)
                    .set("monitoring.dashboard.enabled", true));
    Map<String, Object> rule =
        r.custom().stream()
            .filter(m -> m.get("kind").equals("PrometheusRule"))
            .findFirst()
            .orElseThrow();
    String rules = rule.get("spec").toString();
    assertThat(rules)
        .contains(
            "EtcdMemberLearnerStalled",
            "EtcdMemberNotReady",
            "EtcdMemberNoLeader",
            "EtcdMemberDiskUnhealthy",
            "EtcdMemberCertificateExpiresSoon");
    V1ConfigMap dashboard =
        r.all(V1ConfigMap.class).stream()
            .filter(c -> c.getMetadata().getName().endsWith("-dashboard"))
            .findFirst()
            .orElseThrow();
    assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
    Map<String, Object> json =
        Yaml.getSnakeYaml(null).load(dashboard.getData().get("etcd-member-agent.json"));
    assertThat((List<Object>) json.get("panels")).hasSizeGreaterThanOrEqualTo(6);
  }

  @Test
  void theChartsVersionsAreTheAgentsAndTheImageDefaultsToThem() throws IOException {
    String pom = java.nio.file.Files.readString(Path.of("pom.xml"));
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("<version>([0-9.]+)(-SNAPSHOT)?</version>").matcher(pom);
    assertThat(m.find()).isTrue();
    Map<String, Object> chart =
        Yaml.getSnakeYaml(null).load(java.nio.file.Files.readString(CHART.resolve("Chart.yaml")));
    assertThat(chart)
        .as("version and appVersion: the agent's release")
        .containsEntry("version", m.group(1))
        .containsEntry("appVersion", m.group(1));
    assertThat(container(pod(render(t -> t)).getContainers(), "agent").getImage())
        .isEqualTo("ghcr.io/etcd-member-agent/etcd-member-agent:" + m.group(1));
  }

  @Test
  void replicasZeroIsAPauseTheSchemaAccepts() throws IOException {
    assertThat(render(t -> t.set("replicas", 0)).one(V1StatefulSet.class).getSpec().getReplicas())
        .isZero();
    assertThatThrownBy(() -> render(t -> t.set("replicas", -1))).hasMessageContaining("replicas");
  }

  @Test
  void theSchemaRejectsTyposAndBadTypes() {
    assertThatThrownBy(() -> render(t -> t.set("replicass", 3))).hasMessageContaining("replicass");
    assertThatThrownBy(() -> render(t -> t.set("agent.pollInterval", "soon")))
        .hasMessageContaining("pollInterval");
    assertThatThrownBy(() -> render(t -> t.set("mode", "both"))).hasMessageContaining("mode");
    assertThatThrownBy(() -> render(t -> t.set("tls.client.serverSecret", "etcd-server")))
        .hasMessageContaining("tls.client.serverSecret and tls.client.agentSecret");
    assertThatThrownBy(() -> render(t -> t.set("tls.validity", "a year")))
        .hasMessageContaining("validity");
  }
}
