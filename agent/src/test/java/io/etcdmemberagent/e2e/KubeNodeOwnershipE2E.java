package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Processes;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kube-node.sh down DIR} for a DIR that does not own the node up now (a typo, another run's
 * directory) changes nothing: the node stays Ready with its Pods running, its bridge stays, and a
 * chain named like kube-proxy's on the host, which the node did not make, is left alone (the node's
 * own chains are in its network namespace: {@link KubeNodeHostNetworkE2E}).
 */
class KubeNodeOwnershipE2E {

  @TempDir Path other;

  @Test
  void aDownOfAnotherDirLeavesTheNodeUpAndForeignChainsAlone() {
    assumeTrue(KubeNode.available(), "the node needs root");
    KubeNode node = KubeNode.shared();
    String iptables = node.part("iptables").toString();
    Processes.Result made =
        Processes.run(Map.of(), 30, List.of(iptables, "-w", "-N", "KUBE-SOMETHING-ELSE"));
    assertThat(made.exitCode()).as(made.output()).isZero();
    try {
      Processes.Result down = node.script("down", other);
      assertThat(down.exitCode()).as("down of a DIR that owns nothing").isEqualTo(2);
      assertThat(down.output())
          .contains(
              other + " does not own the node up now (" + node.dir() + " does): nothing changed");

      assertThat(
              node.kubectl(
                  "get",
                  "node",
                  KubeNode.NAME,
                  "-o",
                  "jsonpath={.status.conditions[?(@.type=='Ready')].status}"))
          .as("the node after the wrong down")
          .isEqualTo("True");
      assertThat(
              node.kubectl(
                  "get", "pods", "-n", "kube-system", "-o", "jsonpath={.items[*].status.phase}"))
          .contains("Running")
          .doesNotContain("Failed");
      assertThat(
              Processes.run(
                      Map.of(), 10, List.of("ip", "-n", "ema-node", "link", "show", "ema-node0"))
                  .exitCode())
          .as("the node's bridge, in its network namespace")
          .isZero();
      assertThat(
              Processes.run(Map.of(), 30, List.of(iptables, "-w", "-S", "KUBE-SOMETHING-ELSE"))
                  .exitCode())
          .as("a chain the node did not make")
          .isZero();
    } finally {
      Processes.run(Map.of(), 30, List.of(iptables, "-w", "-X", "KUBE-SOMETHING-ELSE"));
    }
  }
}
