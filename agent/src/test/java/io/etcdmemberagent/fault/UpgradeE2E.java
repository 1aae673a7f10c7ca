package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.EtcdMember;
import io.etcdmemberagent.testing.Etcdctl;
import io.etcdmemberagent.testing.LogFiles;
import io.etcdmemberagent.testing.Pod;
import io.etcdmemberagent.testing.Poll;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A three-member cluster with the real jar beside each member, upgraded in place member by member
 * along the supported path 3.5 → 3.6 → 3.7 (one minor version at a time, followers first, the
 * leader last), with a learner (3.7) joining while the cluster runs 3.6 and 3.7 side by side. Every
 * agent is recorded throughout: ready only for a healthy started voter, ready again after each
 * restart; every member ends a ready voter and no key is lost.
 */
class UpgradeE2E {

  private static final int KEYS = 500;
  private static final int KEYS_UNDER_36 = 150;
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

  private final Resources resources = new Resources();
  private final Map<EtcdMember, FaultRig> rigs = new LinkedHashMap<>();

  @AfterEach
  void cleanUp() throws Exception {
    resources.close();
  }

  @Test
  void upgradedMemberByMemberWithALearnerJoiningMidwayNothingIsLost() throws Exception {
    EtcdCluster cluster =
        resources.keep(EtcdCluster.startWithFlags("3.5", 3, List.of("--snapshot-count=100")));
    String leader = cluster.leader().orElseThrow().clientUrl();
    for (int i = 0; i < KEYS; i++) {
      cluster.client().put(leader, String.format("data/%05d", i), ("value-" + i).getBytes());
    }
    for (EtcdMember m : cluster.members()) {
      FaultRig rig = resources.keep(new FaultRig(false));
      rig.startAgent(m.clientUrl(), Learners.voters(cluster));
      rig.record(m.clientUrl(), () -> others(cluster, m));
      rigs.put(m, rig);
    }
    rigs.values().forEach(r -> r.awaitReady("before the upgrade"));

    upgradeEveryMember(cluster, "3.6");
    awaitClusterVersion(cluster, "3.6");
    String leader36 = cluster.leader().orElseThrow().clientUrl();
    for (int i = KEYS; i < KEYS + KEYS_UNDER_36; i++) {
      cluster.client().put(leader36, String.format("data/%05d", i), ("value-" + i).getBytes());
    }

    // 3.6 and 3.7 side by side: one member upgraded, then a 3.7 learner joins and is promoted.
    List<EtcdMember> order = followersFirst(cluster);
    upgrade(order.get(0), "3.7");
    Pod pod =
        resources.keep(
            new Pod("etcd-learner", EtcdBinaries.etcd("3.7"), resources.tempDir("upgrade-")));
    assertThat(pod.join(Learners.voters(cluster))).as(pod.lastJoinOutput).isZero();
    long learnerId = Learners.byPeerUrl(cluster, pod.peerUrl()).orElseThrow().getID();
    FaultRig learnerRig = resources.keep(new FaultRig(false));
    learnerRig.startAgent(
        pod.clientUrl(), Learners.voters(cluster), "--peer-urls=" + pod.peerUrl());
    learnerRig.record(pod.clientUrl(), Learners.running(cluster));
    learnerRig.mark(History.Kind.FAULT_BEGINS, "a 3.7 learner joins a 3.6/3.7 cluster");
    pod.startEtcd();
    Poll.until(
        "the learner promoted by its own agent",
        Duration.ofSeconds(60),
        () -> !Learners.byPeerUrl(cluster, pod.peerUrl()).orElseThrow().getIsLearner());
    learnerRig.mark(History.Kind.FAULT_ENDS, "promoted");
    learnerRig.awaitReady("the promoted learner");
    for (EtcdMember m : order.subList(1, order.size())) {
      upgrade(m, "3.7");
    }
    awaitClusterVersion(cluster, "3.7");

    for (var entry : rigs.entrySet()) {
      entry.getValue().awaitReady(entry.getKey().name() + " after the upgrade");
      entry
          .getValue()
          .assertInvariants(cluster.client().memberId(entry.getKey().clientUrl()), 5000);
    }
    learnerRig.assertInvariants(learnerId, 5000);
    assertThat(FaultInjectionE2E.members(cluster))
        .as("four voters")
        .hasSize(4)
        .noneMatch(io.etcd.jetcd.api.Member::getIsLearner);
    for (EtcdMember m : cluster.members()) {
      assertThat(cluster.client().status(m.clientUrl()).getVersion()).startsWith("3.7.");
    }
    assertThat(cluster.client().status(pod.clientUrl()).getVersion()).startsWith("3.7.");
    String count =
        Etcdctl.at(pod.clientUrl()).run("get", "data/", "--prefix", "--count-only", "-w", "fields");
    Matcher m = Pattern.compile("\"Count\" : (\\d+)").matcher(count);
    assertThat(m.find()).as(count).isTrue();
    assertThat(Integer.parseInt(m.group(1)))
        .as("keys written before and during the upgrade")
        .isEqualTo(KEYS + KEYS_UNDER_36);
  }

  private void upgradeEveryMember(EtcdCluster cluster, String target) {
    // the leader is always one of the three here: the learner joins later
    for (EtcdMember m : followersFirst(cluster)) {
      upgrade(m, target);
    }
  }

  /** Stops one member, starts it again on its data with the target version's binary. */
  private void upgrade(EtcdMember member, String target) {
    FaultRig rig = rigs.get(member);
    rig.mark(History.Kind.FAULT_BEGINS, member.name() + " stopped for the upgrade to " + target);
    member.kill();
    rig.awaitNotReady(member.name() + " down");
    member.restartAs(EtcdBinaries.etcd(target));
    rig.mark(History.Kind.FAULT_ENDS, member.name() + " restarted on " + target);
    try {
      rig.awaitReady(member.name() + " on " + target);
    } catch (AssertionError e) {
      throw new AssertionError(
          e.getMessage() + "; etcd log: " + LogFiles.tail(member.logFile(), 4), e);
    }
  }

  private static List<EtcdMember> followersFirst(EtcdCluster cluster) {
    EtcdMember leader = cluster.leader().orElseThrow();
    List<EtcdMember> order = new ArrayList<>(cluster.members());
    order.remove(leader);
    order.add(leader);
    return order;
  }

  private static List<String> others(EtcdCluster cluster, EtcdMember self) {
    return cluster.members().stream()
        .filter(m -> m != self && m.running())
        .map(EtcdMember::clientUrl)
        .toList();
  }

  /** The cluster version moves up once every member runs the new version (etcd's /version). */
  private static void awaitClusterVersion(EtcdCluster cluster, String minor) {
    Poll.until(
        "cluster version " + minor,
        Duration.ofSeconds(30),
        () -> {
          String url = cluster.members().get(0).clientUrl() + "/version";
          try {
            HttpResponse<String> r =
                HTTP.send(
                    HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(1)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.body().contains("\"etcdcluster\":\"" + minor + ".");
          } catch (java.io.IOException e) {
            return false;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
        });
  }
}
