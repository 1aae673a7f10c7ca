package io.etcdmemberagent.bench;

import io.etcd.jetcd.api.Member;
import io.etcd.jetcd.api.StatusResponse;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.Pod;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Promotion policies side by side on the same kind of cluster: ours (the agent jar next to the
 * learner, defaults: learner poll 200ms, 2 stable polls, max lag 5000) and two peers' emulated from
 * the test process: etcd-backup-restore's "promote every 5s and let etcd decide" and kubeadm's
 * "retry promote every 500ms for 2 min". Measures the delay from our rule first holding (an
 * observer sampling the learner's and the leader's Status every 20 ms) to the member being a voter,
 * and wrongful promotions of a learner frozen after it caught up.
 */
final class PromotionBench {

  enum Policy {
    OURS("ours (agent running when etcd starts)"),
    OURS_COLD("ours (agent JVM started together with etcd)"),
    BACKUP_RESTORE("every 5s, etcd decides (etcd-backup-restore)"),
    KUBEADM("every 500ms for 2 min (kubeadm)");

    final String label;

    Policy(String label) {
      this.label = label;
    }

    boolean agent() {
      return this == OURS || this == OURS_COLD;
    }

    Duration period() {
      return this == KUBEADM ? Duration.ofMillis(500) : Duration.ofSeconds(5);
    }

    Duration giveUpAfter() {
      return this == KUBEADM ? Duration.ofMinutes(2) : Duration.ofDays(1);
    }
  }

  static final long MAX_LAG = 5000;

  private final Settings settings;
  private final Path workDir;

  PromotionBench(Settings settings, Path workDir) {
    this.settings = settings;
    this.workDir = workDir;
  }

  void run(Report report) throws Exception {
    report.section(
        "Promotion delay",
        "A 3-member etcd "
            + io.etcdmemberagent.testing.EtcdBinaries.patchVersion(
                io.etcdmemberagent.testing.EtcdBinaries.primary())
            + " cluster loaded with "
            + settings.learnerMegabytes()
            + " MB, a fourth member added as a learner by `join` and started. Delay = from our rule"
            + " first holding (learner answers Status, leader raftIndex − learner applied ≤ 5000,"
            + " sampled every 20 ms) to the member list showing a voter. Negative: promoted before"
            + " the learner had caught up by our rule.");
    for (Policy policy : delayPolicies()) {
      List<Double> delays = new ArrayList<>();
      for (int run = 0; run < settings.runs(); run++) {
        delays.add(promotionDelay(policy));
      }
      report.row(
          "rule holds → voter",
          policy.label,
          Stats.of(delays).format("ms"),
          policy.agent() ? "≤ learner poll interval + 100 ms = 300 ms" : "");
    }
    report.section(
        "Wrongful promotions",
        "A learner that caught up (3 MB), then frozen with SIGSTOP; the cluster takes 3 writes;"
            + " each policy acts for "
            + settings.frozenWindow().toSeconds()
            + " s. etcd accepts a promote when the learner's raft Match is"
            + " ≥ 90% of the leader's, which a frozen learner still has.");
    for (Policy policy : frozenPolicies()) {
      int wrongful = 0;
      for (int run = 0; run < settings.runs(); run++) {
        wrongful += frozenLearnerPromoted(policy) ? 1 : 0;
      }
      report.row(
          "frozen learner promoted",
          policy.label,
          wrongful + " of " + settings.runs() + " runs",
          policy == Policy.OURS ? "0" : "");
    }
  }

  /**
   * Every policy; the smoke run inside {@code ./mvnw verify} (a 3-member cluster per policy and
   * run) only keeps each code path alive: the agent and one peer loop for the delay, the frozen
   * learner with the other peer loop.
   */
  private List<Policy> delayPolicies() {
    return smoke() ? List.of(Policy.OURS, Policy.BACKUP_RESTORE) : List.of(Policy.values());
  }

  private List<Policy> frozenPolicies() {
    return smoke()
        ? List.of(Policy.OURS, Policy.KUBEADM)
        : List.of(Policy.OURS, Policy.BACKUP_RESTORE, Policy.KUBEADM);
  }

  private boolean smoke() {
    return settings.mode().equals("smoke");
  }

  private double promotionDelay(Policy policy) throws Exception {
    Path dir = Files.createTempDirectory(workDir, "promote");
    try (EtcdCluster cluster = EtcdCluster.start(EtcdBinaries.primary(), 3);
        Pod learner = new Pod("learner", EtcdBinaries.etcd(EtcdBinaries.primary()), dir)) {
      load(cluster, settings.learnerMegabytes());
      List<String> voters = Arrays.asList(cluster.clientUrls().split(","));
      if (learner.join(voters) != 0) {
        throw new IllegalStateException("join failed: " + learner.lastJoinOutput);
      }
      AtomicBoolean promoting = new AtomicBoolean(true);
      Thread peer = policy.agent() ? null : peerPolicy(policy, cluster, learner, promoting);
      if (policy.agent()) {
        learner.startAgent(voters);
      }
      if (policy == Policy.OURS) {
        Poll.until(
            "the agent answers /livez",
            Duration.ofSeconds(30),
            () -> Http.statusOrMinusOne(learner.httpPort(), "/livez") == 200);
      }
      learner.startEtcd();
      long ruleHeld = -1;
      long voter = -1;
      long deadline = System.nanoTime() + Duration.ofMinutes(4).toNanos();
      while ((ruleHeld < 0 || voter < 0) && System.nanoTime() < deadline) {
        long now = System.nanoTime();
        if (ruleHeld < 0 && ruleHolds(cluster, learner)) {
          ruleHeld = now;
        }
        if (voter < 0 && isVoter(cluster, learner)) {
          voter = now;
        }
        Thread.sleep(20); // the observer's sampling step, bounded by the deadline
      }
      promoting.set(false);
      if (peer != null) {
        peer.join(10_000);
      }
      return ruleHeld < 0 || voter < 0 ? Double.NaN : (voter - ruleHeld) / 1e6;
    }
  }

  private boolean frozenLearnerPromoted(Policy policy) throws Exception {
    Path dir = Files.createTempDirectory(workDir, "frozen");
    try (EtcdCluster cluster = EtcdCluster.start(EtcdBinaries.primary(), 3);
        Pod learner = new Pod("learner", EtcdBinaries.etcd(EtcdBinaries.primary()), dir)) {
      load(cluster, 3);
      String leader = cluster.leader().orElseThrow().clientUrl();
      for (int i = 0; i < 200; i++) {
        cluster.client().put(leader, "small/" + i, new byte[16]);
      }
      List<String> voters = Arrays.asList(cluster.clientUrls().split(","));
      if (learner.join(voters) != 0) {
        throw new IllegalStateException("join failed: " + learner.lastJoinOutput);
      }
      learner.startEtcd();
      Poll.until(
          "the learner caught up",
          Duration.ofSeconds(60),
          () -> cluster.client().status(learner.clientUrl(), 300).getIsLearner());
      learner.signalEtcd("STOP");
      for (int i = 0; i < 3; i++) {
        cluster.client().put(leader, "after-stop/" + i, new byte[16]);
      }
      AtomicBoolean promoting = new AtomicBoolean(true);
      Thread peer = policy == Policy.OURS ? null : peerPolicy(policy, cluster, learner, promoting);
      if (policy == Policy.OURS) {
        learner.startAgent(voters);
      }
      long end = System.nanoTime() + settings.frozenWindow().toNanos();
      boolean promoted = false;
      while (!promoted && System.nanoTime() < end) {
        promoted = isVoter(cluster, learner);
        Thread.sleep(100); // sampling step within the fixed window
      }
      promoting.set(false);
      if (peer != null) {
        peer.join(10_000);
      }
      learner.signalEtcd("CONT");
      return promoted;
    }
  }

  /** The peer's loop, from the test process: promote this learner through the leader. */
  private static Thread peerPolicy(
      Policy policy, EtcdCluster cluster, Pod learner, AtomicBoolean promoting) {
    Thread t =
        new Thread(
            () -> {
              long giveUp = System.nanoTime() + policy.giveUpAfter().toNanos();
              while (promoting.get() && System.nanoTime() < giveUp) {
                try {
                  Member m = entry(cluster, learner);
                  if (m != null && m.getIsLearner()) {
                    cluster.client().promote(cluster.leader().orElseThrow().clientUrl(), m.getID());
                  }
                } catch (RuntimeException e) {
                  // refused ("not in sync") or no leader: the policy simply tries again
                }
                try {
                  Thread.sleep(policy.period().toMillis()); // the policy's own period
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "peer-policy");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static boolean ruleHolds(EtcdCluster cluster, Pod learner) {
    try {
      StatusResponse local = cluster.client().status(learner.clientUrl(), 100);
      StatusResponse leader =
          cluster.client().status(cluster.leader().orElseThrow().clientUrl(), 500);
      return leader.getRaftIndex() - local.getRaftAppliedIndex() <= MAX_LAG;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static boolean isVoter(EtcdCluster cluster, Pod learner) {
    try {
      Member m = entry(cluster, learner);
      return m != null && !m.getIsLearner();
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static Member entry(EtcdCluster cluster, Pod learner) {
    return cluster.client().members(cluster.leader().orElseThrow().clientUrl()).stream()
        .filter(m -> m.getPeerURLsList().contains(learner.peerUrl()))
        .findFirst()
        .orElse(null);
  }

  static void load(EtcdCluster cluster, int megabytes) {
    byte[] value = new byte[768 * 1024];
    new Random(7).nextBytes(value);
    String leader = cluster.leader().orElseThrow().clientUrl();
    for (int i = 0; i < megabytes * 4 / 3; i++) {
      cluster.client().put(leader, String.format("load/%05d", i), value);
    }
  }
}
