package io.etcdmemberagent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every flag of {@code run} and {@code join} with a malformed value gives one message naming the
 * flag and the value. The tables below must name every declared flag, so a new flag cannot go
 * without a decision about what a malformed value is (or why any value is acceptable).
 */
class MalformedFlagsTest {

  /** Any text is a legal value: a name, or a path whose absence is reported while running. */
  private static final String FREE_FORM = "";

  private static final Map<String, String> RUN =
      Map.ofEntries(
          Map.entry("etcd-endpoint", "127.0.0.1:2379"),
          Map.entry("cluster-endpoints", "http://a:2379,b:2379"),
          Map.entry("peer-urls", "peer-0:2380"),
          Map.entry("http-host", "not a host!"),
          Map.entry("http-port", "99999"),
          Map.entry("https-cert-file", "/nonexistent/serving.crt"),
          Map.entry("https-key-file", "/nonexistent/serving.key"),
          Map.entry("https-client-ca-file", "/nonexistent/clients-ca.crt"),
          Map.entry("authz", "rbac"),
          Map.entry("authz-token-audiences", FREE_FORM),
          Map.entry("authz-allow-ttl", "2"),
          Map.entry("authz-deny-ttl", "0s"),
          Map.entry("authz-attributes", "path"),
          Map.entry("poll-interval", "often"),
          Map.entry("etcd-timeout", "2"),
          Map.entry("max-lag-entries", "a few"),
          Map.entry("ready-success-threshold", "0"),
          Map.entry("promote", "yes"),
          Map.entry("remove-surplus-members", "maybe"),
          Map.entry("peer-tls-required", "perhaps"),
          Map.entry("scale-down-check-interval", "soon"),
          Map.entry("scale-down-budget", "-1s"),
          Map.entry("promote-stable-polls", "0"),
          Map.entry("learner-poll-interval", "0s"),
          Map.entry("promote-backoff", "-1s"),
          Map.entry("promote-max-backoff", "1d"),
          Map.entry("stall-timeout", "never"),
          Map.entry("data-dir", FREE_FORM),
          Map.entry("disk-free-critical", "lots"),
          Map.entry("disk-free-warning", "150%"),
          Map.entry("fsync-probe-interval", "0"),
          Map.entry("fsync-critical", "fast"),
          Map.entry("quota-backend-bytes", "8GiB"),
          Map.entry("quota-critical", "-5%"),
          Map.entry("disk-gates-readiness", "sometimes"),
          Map.entry("inodes-free-critical", "x%"),
          Map.entry("inodes-free-warning", "101%"),
          Map.entry("nospace-fails-readiness", "1"),
          Map.entry("peer-cert", "/nonexistent/peer.crt"),
          Map.entry("peer-cacert", "/nonexistent/ca.crt"),
          Map.entry("cert-expiry-warning", "30 days"),
          Map.entry("peer-tls-check-interval", "hourly"),
          Map.entry("peer-tls-gates-readiness", "no"),
          Map.entry("tls-reload-interval", "10"),
          Map.entry("kube", "yes"),
          Map.entry("kubeconfig", "/nonexistent/kubeconfig"),
          Map.entry("pod-name", "Etcd_0"),
          Map.entry("pod-namespace", "kube.system"),
          Map.entry("condition-prefix", "Etcd Member Agent"),
          Map.entry("kube-timeout", "5"),
          Map.entry("member-resource", "sometimes"),
          Map.entry("resync-interval", "0ms"),
          Map.entry("down-event-after", "later"),
          Map.entry("exit-after", "5x"),
          Map.entry("cacert", "/nonexistent/ca.pem"),
          Map.entry("cert", "/nonexistent/client.pem"),
          Map.entry("key", "/nonexistent/client.key"),
          Map.entry("user", "two words"),
          Map.entry("password-file", "/nonexistent/password"),
          Map.entry("log-format", "xml"),
          Map.entry("log-level", "verbose"));

  private static final Map<String, String> JOIN =
      Map.ofEntries(
          Map.entry("name", FREE_FORM),
          Map.entry("peer-urls", "peer-0:2380"),
          Map.entry("client-urls", "ftp://a:2379"),
          Map.entry("cluster-endpoints", "etcd-client"),
          Map.entry("data-dir", FREE_FORM),
          Map.entry("wal-dir", FREE_FORM),
          Map.entry("env-file", "/nonexistent/dir/etcd.env"),
          Map.entry("bootstrap-member", FREE_FORM),
          Map.entry("bootstrap-wait", "a while"),
          Map.entry("join-timeout", "forever"),
          Map.entry("replace-lost-member", "maybe"),
          Map.entry("initial-cluster-token", FREE_FORM),
          Map.entry("etcd-timeout", "0"),
          Map.entry("etcd-config-template", "/nonexistent/etcd.yaml"),
          Map.entry("etcd-config-file", "/nonexistent/dir/etcd.yaml"),
          Map.entry("generate-tls-dir", "/nonexistent/tls"),
          Map.entry("tls-ca-secret", "Not_A_Name"),
          Map.entry("tls-client-secret", "Not_A_Name"),
          Map.entry("tls-server-names", "a b"),
          Map.entry("tls-validity", "1h"),
          Map.entry("kube", "always"),
          Map.entry("kubeconfig", "/nonexistent/kubeconfig"),
          Map.entry("pod-name", "Etcd_1"),
          Map.entry("pod-namespace", "default.ns"),
          Map.entry("condition-prefix", "Not A Prefix"),
          Map.entry("kube-timeout", "1"),
          Map.entry("member-resource", "yes"),
          Map.entry("cacert", "/nonexistent/ca.pem"),
          Map.entry("cert", "/nonexistent/client.pem"),
          Map.entry("key", "/nonexistent/client.key"),
          Map.entry("user", "two words"),
          Map.entry("password-file", "/nonexistent/password"),
          Map.entry("log-format", "yaml"),
          Map.entry("log-level", "loud"));

  /** What join needs besides the flag under test. */
  private static List<String> joinBase() {
    return List.of(
        "--name=etcd-1",
        "--peer-urls=http://etcd-1:2380",
        "--cluster-endpoints=http://etcd-client:2379",
        "--data-dir=/var/lib/etcd",
        "--env-file=" + System.getProperty("java.io.tmpdir") + "/etcd.env");
  }

  @Test
  void everyFlagHasAMalformedValueOrIsFreeForm() {
    assertThat(RUN.keySet())
        .containsExactlyInAnyOrderElementsOf(RunConfig.FLAGS.stream().map(Flag::name).toList());
    assertThat(JOIN.keySet())
        .containsExactlyInAnyOrderElementsOf(JoinConfig.FLAGS.stream().map(Flag::name).toList());
  }

  static Stream<Arguments> runFlags() {
    return RUN.entrySet().stream()
        .filter(e -> !e.getValue().equals(FREE_FORM))
        .map(e -> Arguments.of(e.getKey(), e.getValue()));
  }

  static Stream<Arguments> joinFlags() {
    return JOIN.entrySet().stream()
        .filter(e -> !e.getValue().equals(FREE_FORM))
        .map(e -> Arguments.of(e.getKey(), e.getValue()));
  }

  @ParameterizedTest(name = "run --{0}={1}")
  @MethodSource("runFlags")
  void runNamesTheMalformedFlag(String flag, String value) throws Exception {
    List<String> args = new ArrayList<>(List.of("--" + flag + "=" + value));
    // --cert and --key go together: the other one exists, so the malformed one is named
    Path other = Files.createTempFile("other", ".pem");
    if (flag.equals("cert")) {
      args.add("--key=" + other);
    } else if (flag.equals("key")) {
      args.add("--cert=" + other);
    }
    assertThatThrownBy(() -> RunConfig.parse(args, Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("--" + flag)
        .hasMessageNotContaining("\n");
    Files.delete(other);
  }

  @ParameterizedTest(name = "join --{0}={1}")
  @MethodSource("joinFlags")
  void joinNamesTheMalformedFlag(String flag, String value) {
    List<String> args = new ArrayList<>(joinBase());
    args.add("--" + flag + "=" + value);
    if (flag.equals("etcd-config-template")) {
      args.add("--etcd-config-file=" + System.getProperty("java.io.tmpdir") + "/etcd.yaml");
    }
    if (flag.startsWith("tls-")) {
      // read only with --generate-tls-dir, which needs its CA Secret named
      args.add("--generate-tls-dir=" + System.getProperty("java.io.tmpdir"));
      if (!flag.equals("tls-ca-secret")) {
        args.add("--tls-ca-secret=etcd-ca");
      }
    }
    assertThatThrownBy(() -> JoinConfig.parse(args, Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("--" + flag)
        .hasMessageNotContaining("\n");
  }

  @Test
  void contradictoryFlagsAreRefused() {
    assertThatThrownBy(
            () ->
                RunConfig.parse(
                    List.of("--disk-free-critical=20%", "--disk-free-warning=10%"), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessage("--disk-free-warning (10%) must not be below --disk-free-critical (20%)");
    assertThatThrownBy(
            () ->
                RunConfig.parse(
                    List.of("--promote-backoff=5s", "--promote-max-backoff=1s"), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("--promote-max-backoff");
  }

  @Test
  void servingFlagsThatCannotWorkAloneAreRefused() throws Exception {
    Path pem = Files.createTempFile("serving", ".pem");
    try {
      assertThatThrownBy(() -> RunConfig.parse(List.of("--https-cert-file=" + pem), Map.of()))
          .isInstanceOf(ConfigException.class)
          .hasMessage("--https-cert-file and --https-key-file must be given together");
      assertThatThrownBy(() -> RunConfig.parse(List.of("--authz=kube"), Map.of()))
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("--authz=kube needs HTTPS");
      assertThatThrownBy(() -> RunConfig.parse(List.of("--https-client-ca-file=" + pem), Map.of()))
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("--https-client-ca-file needs HTTPS");
      ServingSettings s =
          RunConfig.parse(
                  List.of(
                      "--https-cert-file=" + pem,
                      "--https-key-file=" + pem,
                      "--authz=kube",
                      "--authz-token-audiences=https://kubernetes.default.svc, agent"),
                  Map.of())
              .serving();
      assertThat(s.https()).isTrue();
      assertThat(s.kubeAuthz()).isTrue();
      assertThat(s.tokenAudiences()).containsExactly("https://kubernetes.default.svc", "agent");
      assertThat(s.allowTtl()).hasMinutes(2);
      assertThat(s.denyTtl()).hasSeconds(10);
      assertThat(RunConfig.parse(List.of(), Map.of()).serving().protectsPaths())
          .as("plain HTTP and open paths by default")
          .isFalse();
    } finally {
      Files.delete(pem);
    }
  }

  @Test
  void wellFormedKubernetesNamesAndHostsAreAccepted() throws ConfigException {
    RunConfig c =
        RunConfig.parse(
            List.of("--pod-name=etcd-0", "--pod-namespace=kube-system", "--http-host=::"),
            Map.of());
    assertThat(c.kube().podName()).contains("etcd-0");
    assertThat(c.httpHost()).isEqualTo("::");
  }
}
