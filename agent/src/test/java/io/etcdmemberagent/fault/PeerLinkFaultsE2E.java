package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Faults on the local member's peer links only, in a real three-member etcd 3.5 cluster whose
 * members advertise their peer URLs through {@link TcpProxy}s. etcd's peer connections carry the
 * dialer's ID ({@code X-Server-From}), so the proxies in front of the other members fault only the
 * connections the local member dialed, and the proxy in front of the local member faults all of its
 * connections: the local member's raft traffic, both ways, and nothing else.
 */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#withNewest")
class PeerLinkFaultsE2E {

  @Parameter String version;

  private final Resources resources = new Resources();
  private final Map<String, TcpProxy> peerProxies = new ConcurrentHashMap<>();

  @AfterEach
  void cleanUp() throws Exception {
    resources.close();
  }

  private static void hold(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis()); // how long a fault or a steady window lasts, not a wait for state
  }

  @Test
  void latencyOnThePeerLinksKeepsTheMemberReadyAndLossMakesItNotReadyUntilItHeals()
      throws Exception {
    UnaryOperator<String> proxied =
        url -> peerProxies.computeIfAbsent(url, u -> resources.keep(TcpProxy.inFrontOf(u))).url();
    EtcdCluster cluster =
        resources.keep(EtcdCluster.start(version, 3, UnaryOperator.identity(), proxied));
    EtcdMember leader = cluster.leader().orElseThrow();
    EtcdMember local =
        cluster.members().stream().filter(m -> m != leader).findFirst().orElseThrow();
    long id = cluster.client().memberId(local.clientUrl());
    String dialedByLocal = "x-server-from: " + Long.toHexString(id);
    List<TcpProxy> links = cluster.members().stream().map(this::proxyOf).toList();
    for (EtcdMember m : cluster.members()) {
      if (m != local) {
        proxyOf(m).select(head -> head.toLowerCase(java.util.Locale.ROOT).contains(dialedByLocal));
      }
    }
    List<String> others =
        cluster.members().stream().filter(m -> m != local).map(EtcdMember::clientUrl).toList();
    FaultRig rig = resources.keep(new FaultRig(true));
    rig.startAgent(local.clientUrl(), others);
    rig.record(local.clientUrl(), () -> others);
    rig.awaitReady("start");
    rig.awaitCondition("True");

    setAll(links, new TcpProxy.Mode.Delay(Duration.ofMillis(30), Duration.ofMillis(20)));
    rig.mark(History.Kind.STEADY_BEGINS, "30±20 ms per chunk on the local member's peer links");
    hold(Duration.ofSeconds(4));
    rig.mark(History.Kind.STEADY_ENDS, "30±20 ms per chunk on the local member's peer links");

    rig.mark(History.Kind.FAULT_BEGINS, "the local member's peer links reset, on and off");
    for (int i = 0; i < 4; i++) {
      setAll(links, TcpProxy.DROP);
      hold(Duration.ofMillis(1500));
      setAll(links, TcpProxy.PASS);
      hold(Duration.ofMillis(500));
    }
    rig.mark(History.Kind.FAULT_ENDS, "peer links pass again");
    rig.awaitReady("peer links pass");

    rig.mark(History.Kind.FAULT_BEGINS, "the local member's peer links silent (blackhole)");
    setAll(links, TcpProxy.BLACKHOLE);
    rig.awaitNotReady("peer links silent");
    Poll.until(
        "the other two to have a leader without the local member (only its links are cut)",
        Duration.ofSeconds(10),
        () -> {
          long l = cluster.client().status(others.get(0), 500).getLeader();
          return l != 0 && l != id;
        });
    hold(Duration.ofSeconds(2));
    setAll(links, TcpProxy.PASS);
    rig.mark(History.Kind.FAULT_ENDS, "peer links pass again");
    rig.awaitReady("peer links pass");
    rig.awaitCondition("True");

    History.Snapshot h = rig.assertInvariants(id, 5000);
    assertThat(h.truths())
        .as("the silent links cost the local member its leader")
        .anyMatch(t -> t.answered() && !t.leaderKnown());
  }

  private TcpProxy proxyOf(EtcdMember m) {
    return peerProxies.get(m.listenPeerUrl());
  }

  private static void setAll(List<TcpProxy> proxies, TcpProxy.Mode mode) {
    proxies.forEach(p -> p.mode(mode));
  }
}
