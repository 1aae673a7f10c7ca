package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Poll;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The chart's default NetworkPolicy where it is enforced: the node runs kube-router's
 * network-policy controller ({@code test-e2e/kube-node.sh}), so a default install that came up
 * Ready came up through the policy (the members' raft on the peer port, {@code join} and the agents
 * on each other's client port, the kubelet's probes from the node). Then a Pod in another
 * namespace, which no rule grants, is refused at the peer port and admitted at the client port
 * (applications, from anywhere by default) and at the agent's and etcd's metrics ports (scrapers).
 * With the scrapers' rule naming a wrong port that Pod is refused at the agent's port, and without
 * the policy it reaches the peer port: the checks depend on the policy and its ports. The policy is
 * gone afterwards (the release is about to be uninstalled).
 */
final class ChartNetworkPolicy {

  static final String OUTSIDER = "outsider";
  static final int CLIENT_PORT = 2379;
  static final int PEER_PORT = 2380;
  static final int METRICS_PORT = 2381;

  private ChartNetworkPolicy() {}

  static void assertEnforcedOnTheDefaultInstall(ChartRelease db, KubeNode node, Path dir) {
    String policy = db.name();
    String ns = db.namespace();
    assertThat(node.kubectl("get", "networkpolicy", "-n", ns, "-o", "name"))
        .as("the chart's default policy")
        .contains("networkpolicy.networking.k8s.io/" + policy);
    String member = db.podIps().get(db.pod(0));
    startOutsider(node, dir);
    try {
      assertThat(connects(node, member, PEER_PORT))
          .as("the peer port, from a Pod of another namespace without a grant")
          .isFalse();
      assertThat(connects(node, member, CLIENT_PORT))
          .as("the client port: applications from anywhere by default")
          .isTrue();
      assertThat(connects(node, member, ChartRelease.AGENT_PORT))
          .as("the agent's port: scrapers from anywhere by default")
          .isTrue();
      assertThat(connects(node, member, METRICS_PORT)).as("etcd's metrics port").isTrue();

      // the scrapers' rule with a wrong port: the agent's port is refused
      node.kubectl(
          "patch",
          "networkpolicy",
          policy,
          "-n",
          ns,
          "--type=json",
          "-p",
          "[{\"op\":\"replace\",\"path\":\"/spec/ingress/2/ports/0/port\",\"value\":"
              + (ChartRelease.AGENT_PORT + 1)
              + "}]");
      Poll.until(
          "the agent's port refused while the policy names a wrong port",
          Duration.ofSeconds(60),
          () -> !connects(node, member, ChartRelease.AGENT_PORT));
      int members = db.pods().size();
      assertThat(db.readyPods())
          .as("the kubelet's probes come from the node, which every policy admits")
          .hasSize(members);

      // without the policy the outsider reaches the peer port: the refusal above was the policy's
      node.kubectl("delete", "networkpolicy", policy, "-n", ns);
      Poll.until(
          "the peer port reached once the policy is gone",
          Duration.ofSeconds(60),
          () -> connects(node, member, PEER_PORT));
    } finally {
      node.tool("kubectl", 60, "delete", "namespace", OUTSIDER, "--wait=false");
    }
  }

  /** A busybox Pod in a namespace of its own, which no policy grants anything. */
  private static void startOutsider(KubeNode node, Path dir) {
    Path pod = dir.resolve("outsider.yaml");
    try {
      Files.writeString(
          pod,
          """
          apiVersion: v1
          kind: Namespace
          metadata: {name: %s}
          ---
          apiVersion: v1
          kind: Pod
          metadata: {name: probe, namespace: %s}
          spec:
            terminationGracePeriodSeconds: 0
            containers:
            - name: probe
              image: localhost/busybox:node
              imagePullPolicy: Never
              command: [sleep, "3600"]
          """
              .formatted(OUTSIDER, OUTSIDER));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    node.kubectl("apply", "-f", pod.toString());
    node.kubectl("wait", "-n", OUTSIDER, "pod/probe", "--for=condition=Ready", "--timeout=90s");
  }

  /** Whether the outsider's TCP connection to ip:port is accepted (within 3 s). */
  private static boolean connects(KubeNode node, String ip, int port) {
    return node.tool(
                "kubectl",
                30,
                "exec",
                "-n",
                OUTSIDER,
                "probe",
                "--",
                "busybox",
                "nc",
                "-w",
                "3",
                ip,
                String.valueOf(port),
                "-e",
                "/bin/true")
            .exitCode()
        == 0;
  }
}
