package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.etcdmemberagent.testing.HostNetwork;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Processes;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The node keeps its network to itself ({@code kube-node.sh} runs it in the network namespace
 * {@code ema-node}): the host's forwarding sysctls and every table of iptables and ip6tables are
 * the same before {@code up}, while the node is up, and after {@code down}; the host reaches the
 * API server and the Pods through the one veth pair and its one route, and {@code down} takes both
 * with the namespace. The node is taken down and up again here, so the tests after this one find it
 * as the others do.
 */
class KubeNodeHostNetworkE2E {

  @Test
  void theHostsForwardingAndFilterTablesStayAsTheyWere() {
    assumeTrue(KubeNode.available(), "the node needs root");
    KubeNode node = KubeNode.shared();
    Path parts = node.part("iptables").getParent();
    String before = node.hostNetworkBeforeUp();
    assertThat(before)
        .as("what was read")
        .contains("net/ipv4/ip_forward=", "iptables-save: *filter");

    assertThat(HostNetwork.snapshot(parts)).as("the host while the node is up").isEqualTo(before);
    assertThat(run("ip", "-o", "route", "show", "10.214.0.0/24"))
        .as("the host's one route to the node")
        .contains("via 10.216.0.2 dev ema-node-host");
    assertThat(run("ip", "-n", "ema-node", "-o", "link", "show", "ema-node0"))
        .as("the node's bridge, inside its namespace")
        .contains("ema-node0");
    assertThat(Processes.run(Map.of(), 10, List.of("ip", "link", "show", "ema-node0")).exitCode())
        .as("no bridge of the node on the host")
        .isNotZero();
    assertThat(node.kubectl("get", "--raw", "/readyz")).isEqualTo("ok");

    node.downAndUpAgain(
        () -> {
          assertThat(HostNetwork.snapshot(parts)).as("the host after down").isEqualTo(before);
          assertThat(run("ip", "netns", "list").lines().map(l -> l.split(" ")[0]))
              .as("the node's network namespace after down")
              .doesNotContain("ema-node");
          assertThat(run("ip", "-o", "link", "show")).doesNotContain("ema-node-host");
          assertThat(run("ip", "-o", "route", "show")).doesNotContain("10.214.0.0/24");
        });

    assertThat(HostNetwork.snapshot(parts)).as("the host up again").isEqualTo(before);
    assertThat(node.kubectl("get", "--raw", "/readyz")).as("the node up again").isEqualTo("ok");
  }

  private static String run(String... command) {
    Processes.Result r = Processes.run(Map.of(), 10, List.of(command));
    assertThat(r.exitCode()).as(String.join(" ", command) + ": " + r.output()).isZero();
    return r.output();
  }
}
