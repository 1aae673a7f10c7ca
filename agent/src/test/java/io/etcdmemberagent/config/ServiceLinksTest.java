package io.etcdmemberagent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The kubelet injects docker-link style variables for every Service in the namespace (unless the
 * Pod says {@code enableServiceLinks: false}); a Service named {@code etcd-member-agent-…} gives
 * names with our prefix. These are named and set aside; a mistyped variable is still refused.
 */
class ServiceLinksTest {

  /**
   * What kubelet v1.36's envvars.FromServices gives a ClusterIP Service "etcd-member-agent-client".
   */
  private static final Map<String, String> CLIENT_SERVICE =
      Map.of(
          "ETCD_MEMBER_AGENT_CLIENT_SERVICE_HOST", "10.96.0.17",
          "ETCD_MEMBER_AGENT_CLIENT_SERVICE_PORT", "2379",
          "ETCD_MEMBER_AGENT_CLIENT_SERVICE_PORT_CLIENT", "2379",
          "ETCD_MEMBER_AGENT_CLIENT_PORT", "tcp://10.96.0.17:2379",
          "ETCD_MEMBER_AGENT_CLIENT_PORT_2379_TCP", "tcp://10.96.0.17:2379",
          "ETCD_MEMBER_AGENT_CLIENT_PORT_2379_TCP_PROTO", "tcp",
          "ETCD_MEMBER_AGENT_CLIENT_PORT_2379_TCP_PORT", "2379",
          "ETCD_MEMBER_AGENT_CLIENT_PORT_2379_TCP_ADDR", "10.96.0.17");

  @Test
  void aServiceNamedLikeOurPrefixIsSetAsideNotRefused() throws ConfigException {
    ServiceLinks links = ServiceLinks.in(CLIENT_SERVICE);
    assertThat(links.names()).containsExactlyInAnyOrderElementsOf(CLIENT_SERVICE.keySet());
    assertThat(links.remaining()).isEmpty();
    RunConfig config = RunConfig.parse(List.of(), links.remaining());
    assertThat(config.httpPort()).as("the default").isEqualTo(9379);
  }

  @Test
  void aServiceLinkOnAFlagsTwinIsSetAsideAndTheDefaultHolds() throws ConfigException {
    // A Service named "etcd-member-agent-http" (IPv6 cluster IP) gives the twin of --http-port.
    Map<String, String> env =
        Map.of(
            "ETCD_MEMBER_AGENT_HTTP_PORT", "tcp://[fd00:10:96::1f]:8080",
            "ETCD_MEMBER_AGENT_HTTP_SERVICE_HOST", "fd00:10:96::1f",
            "ETCD_MEMBER_AGENT_HTTP_PORT_8080_SCTP_ADDR", "fd00:10:96::1f",
            "ETCD_MEMBER_AGENT_POLL_INTERVAL", "2s");
    ServiceLinks links = ServiceLinks.in(env);
    assertThat(links.names())
        .containsExactlyInAnyOrder(
            "ETCD_MEMBER_AGENT_HTTP_PORT",
            "ETCD_MEMBER_AGENT_HTTP_SERVICE_HOST",
            "ETCD_MEMBER_AGENT_HTTP_PORT_8080_SCTP_ADDR");
    assertThat(links.remaining()).containsOnlyKeys("ETCD_MEMBER_AGENT_POLL_INTERVAL");
    assertThat(links.describe())
        .isEqualTo(
            "set aside 3 variables the kubelet injects for Services named etcd-member-agent-…"
                + " (ETCD_MEMBER_AGENT_HTTP_PORT, ETCD_MEMBER_AGENT_HTTP_PORT_8080_SCTP_ADDR,"
                + " ETCD_MEMBER_AGENT_HTTP_SERVICE_HOST); set enableServiceLinks: false in the"
                + " Pod spec");
    RunConfig config = RunConfig.parse(List.of(), links.remaining());
    assertThat(config.httpPort()).as("the default").isEqualTo(9379);
  }

  @Test
  void onlyTheShapeTheKubeletWritesIsSetAside() {
    Map<String, String> notLinks =
        Map.of(
            "ETCD_MEMBER_AGENT_HTTP_PORT", "9090",
            "ETCD_MEMBER_AGENT_CLIENT_SERVICE_HOST", "etcd.example",
            "ETCD_MEMBER_AGENT_CLIENT_SERVICE_PORT", "http",
            "ETCD_MEMBER_AGENT_CLIENT_PORT", "http://10.96.0.17:2379",
            "ETCD_MEMBER_AGENT_CLIENT_PORT_2379_TCP", "tcp://10.96.0.17:2380",
            "ETCD_MEMBER_AGENT_CLIENT_PORT_2379_TCP_PROTO", "udp",
            "ETCD_MEMBER_AGENT_CLIENT_PORT_2379_HTTP", "tcp://10.96.0.17:2379",
            "ETCD_MEMBER_AGENT_POL_INTERVAL", "1s",
            "OTHER_SERVICE_HOST", "10.96.0.1");
    ServiceLinks links = ServiceLinks.in(notLinks);
    assertThat(links.names()).isEmpty();
    assertThat(links.remaining()).isEqualTo(notLinks);
    assertThat(links.describe()).isEmpty();
  }

  @Test
  void aMistypedVariableBesideServiceLinksIsStillRefused() {
    Map<String, String> env = new java.util.HashMap<>(CLIENT_SERVICE);
    env.put("ETCD_MEMBER_AGENT_POL_INTERVAL", "1s");
    assertThatThrownBy(() -> RunConfig.parse(List.of(), ServiceLinks.in(env).remaining()))
        .hasMessage("unknown environment variable ETCD_MEMBER_AGENT_POL_INTERVAL (no such flag)");
  }
}
