package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.api.Member;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Pod;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.function.Supplier;

/** A learner Pod joined to a test cluster, and the views of the cluster the learner tests use. */
final class Learners {

  private Learners() {}

  /**
   * Loads the cluster with about {@code megabytes} MB, then joins a Pod as a learner with the
   * agent's {@code join} (its etcd not started yet).
   */
  static Pod joinedPod(Resources resources, EtcdCluster cluster, int megabytes) throws Exception {
    if (megabytes > 0) {
      byte[] value = new byte[768 * 1024];
      new Random(3).nextBytes(value);
      String leader = cluster.leader().orElseThrow().clientUrl();
      for (int i = 0; i < megabytes * 4 / 3; i++) {
        cluster.client().put(leader, "load/" + i, value);
      }
    }
    Pod pod =
        resources.keep(
            new Pod(
                "etcd-learner",
                EtcdBinaries.etcd(cluster.version()),
                resources.tempDir("learner-fault-")));
    assertThat(pod.join(voters(cluster))).as(pod.lastJoinOutput).isZero();
    return pod;
  }

  /** The running voters' client URLs. */
  static List<String> voters(EtcdCluster cluster) {
    return Arrays.asList(cluster.clientUrls().split(","));
  }

  /** The running voters' client URLs, read again on every call. */
  static Supplier<List<String>> running(EtcdCluster cluster) {
    return () -> voters(cluster);
  }

  /** The member with this peer URL, as the leader lists it. */
  static Optional<Member> byPeerUrl(EtcdCluster cluster, String peerUrl) {
    return FaultInjectionE2E.members(cluster).stream()
        .filter(m -> m.getPeerURLsList().contains(peerUrl))
        .findFirst();
  }

  /** The agent's /status body. */
  static String state(FaultRig rig) {
    return Http.get(rig.agent().port(), "/status").body();
  }
}
