package io.etcdmemberagent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RunConfigTest {

  @Test
  void defaultsMatchTheContract() throws Exception {
    RunConfig c = RunConfig.parse(List.of(), Map.of());
    assertThat(c.etcdEndpoint()).hasToString("http://127.0.0.1:2379");
    assertThat(c.httpPort()).isEqualTo(9379);
    assertThat(c.pollInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.etcdTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.maxLagEntries()).isEqualTo(5000);
    assertThat(c.clusterEndpoints()).isEmpty();
    assertThat(c.log().format()).isEqualTo("text");
  }

  @Test
  void flagsBeatTheirEnvironmentTwins() throws Exception {
    RunConfig c =
        RunConfig.parse(
            List.of("--poll-interval=250ms", "--http-port", "1234"),
            Map.of(
                "ETCD_MEMBER_AGENT_POLL_INTERVAL", "5s",
                "ETCD_MEMBER_AGENT_MAX_LAG_ENTRIES", "42",
                "ETCD_MEMBER_AGENT_CLUSTER_ENDPOINTS", "http://a:2379, https://b:2379"));
    assertThat(c.pollInterval()).isEqualTo(Duration.ofMillis(250));
    assertThat(c.httpPort()).isEqualTo(1234);
    assertThat(c.maxLagEntries()).isEqualTo(42);
    assertThat(c.clusterEndpoints())
        .extracting(Object::toString)
        .containsExactly("http://a:2379", "https://b:2379");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--poll-interval=fast|invalid value \"fast\" for --poll-interval: expected a duration like 500ms, 2s or 5m",
        "--poll-interval=0s|invalid value \"0s\" for --poll-interval: expected a positive duration like 500ms, 2s or 5m",
        "--etcd-timeout=-1s|invalid value \"-1s\" for --etcd-timeout: expected a duration like 500ms, 2s or 5m",
        "--http-port=70000|invalid value \"70000\" for --http-port: expected a port number from 0 to 65535",
        "--max-lag-entries=-3|invalid value \"-3\" for --max-lag-entries: expected a whole number of at least 0",
        "--etcd-endpoint=127.0.0.1:2379|invalid value \"127.0.0.1:2379\" for --etcd-endpoint: expected an http:// or https:// URL with host and port, like http://127.0.0.1:2379",
        "--cluster-endpoints=http://a:2379,ftp://b:1|invalid value \"ftp://b:1\" for --cluster-endpoints: expected an http:// or https:// URL with host and port, like http://127.0.0.1:2379",
        "--kube=maybe|invalid value \"maybe\" for --kube: expected one of auto, on, off",
        "--log-format=xml|invalid value \"xml\" for --log-format: expected one of text, json",
        "--cacert=/nonexistent/ca.pem|invalid value \"/nonexistent/ca.pem\" for --cacert: no such file",
        "--pol-interval=1s|unknown flag --pol-interval",
        "stray|unexpected argument \"stray\" (flags look like --name=value)",
        "--poll-interval|flag --poll-interval needs a value"
      })
  void badFlagsGiveOneLineNamingFlagAndValue(String arg, String message) {
    assertThatThrownBy(() -> RunConfig.parse(List.of(arg), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessage(message);
  }

  @Test
  void exitAfterIsOffByDefaultAndParsedAsADuration() throws Exception {
    assertThat(RunConfig.parse(List.of(), Map.of()).exitAfter()).isZero();
    assertThat(RunConfig.parse(List.of("--exit-after=5s"), Map.of()).exitAfter())
        .isEqualTo(Duration.ofSeconds(5));
    assertThatThrownBy(() -> RunConfig.parse(List.of("--exit-after=-1s"), Map.of()))
        .hasMessage(
            "invalid value \"-1s\" for --exit-after: expected a duration like 500ms, 2s or 5m");
  }

  @Test
  void badEnvironmentValuesNameTheVariable() {
    assertThatThrownBy(
            () -> RunConfig.parse(List.of(), Map.of("ETCD_MEMBER_AGENT_POLL_INTERVAL", "soon")))
        .hasMessage(
            "invalid value \"soon\" for ETCD_MEMBER_AGENT_POLL_INTERVAL: expected a duration like 500ms, 2s or 5m");
  }

  @Test
  void aMistypedEnvironmentVariableIsRejected() {
    assertThatThrownBy(
            () -> RunConfig.parse(List.of(), Map.of("ETCD_MEMBER_AGENT_POL_INTERVAL", "1s")))
        .hasMessage("unknown environment variable ETCD_MEMBER_AGENT_POL_INTERVAL (no such flag)");
  }

  @Test
  void certAndKeyGoTogether(@TempDir Path dir) throws Exception {
    Path cert = Files.writeString(dir.resolve("c.pem"), "x");
    assertThatThrownBy(() -> RunConfig.parse(List.of("--cert=" + cert), Map.of()))
        .hasMessage("--cert and --key must be given together");
  }

  @Test
  void userAndPasswordFileGoTogetherAndAreTakenFromTheEnvironment(@TempDir Path dir)
      throws Exception {
    Path password = Files.writeString(dir.resolve("password"), "secret\n");
    assertThatThrownBy(() -> RunConfig.parse(List.of("--user=agent"), Map.of()))
        .hasMessage("--user and --password-file must be given together");
    assertThatThrownBy(
            () ->
                JoinConfig.parse(
                    List.of(
                        "--password-file=" + password,
                        "--name=etcd-1",
                        "--peer-urls=http://etcd-1:2380",
                        "--cluster-endpoints=http://etcd-client:2379",
                        "--data-dir=" + dir,
                        "--env-file=" + dir.resolve("env")),
                    Map.of()))
        .hasMessage("--user and --password-file must be given together");
    RunConfig c =
        RunConfig.parse(
            List.of(),
            Map.of(
                "ETCD_MEMBER_AGENT_USER",
                "agent",
                "ETCD_MEMBER_AGENT_PASSWORD_FILE",
                password.toString()));
    assertThat(c.credentials().user()).contains("agent");
    assertThat(c.credentials().passwordFile()).contains(password);
    assertThat(RunConfig.parse(List.of(), Map.of()).credentials())
        .isEqualTo(EtcdCredentials.none());
  }
}
