package io.etcdmemberagent.app.membership;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.app.FakeEtcd;
import io.etcdmemberagent.core.ChangeAnswer;
import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.membership.ScaleDownDecision;
import io.etcdmemberagent.core.membership.ScaleTarget;
import io.etcdmemberagent.core.membership.StatefulSetApi;
import io.etcdmemberagent.core.membership.SurplusPod;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One round against a scripted etcd and StatefulSet: what it reads, what it sends, where. */
class ScaleDownRoundTest {

  final FakeEtcd etcd = new FakeEtcd();
  final FakeStatefulSet sts = new FakeStatefulSet();
  final ScaleDownRound round = new ScaleDownRound(etcd, List.of("local"), sts, Clock.systemUTC());

  static String url(int ordinal) {
    return "http://db-" + ordinal + ".peer:2379";
  }

  /** Members db-0 .. db-(n-1), ids ordinal + 1, every one answering with {@code leader}. */
  void cluster(int n, long leader) {
    List<MemberInfo> members = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      members.add(
          new MemberInfo(
              i + 1, "db-" + i, List.of("http://db-" + i + ".peer:2380"), List.of(url(i)), false));
      etcd.statuses.put(
          url(i),
          new LocalObservation.Answered(
              new LocalStatus(i + 1, leader, 100, 100, 2, 1, 1, false, "3.6.16", List.of())));
    }
    etcd.lists.put("local", new Membership.Known(members, "local"));
  }

  @Test
  void theMemberListComesFromAKnownMemberWhenTheLocalOneAndTheServiceFail() {
    cluster(4, 1);
    Membership list = etcd.lists.remove("local");
    etcd.lists.put(
        url(1), list); // the local member stops with its Pod; the Service hit a frozen one
    List<String> known = new ArrayList<>();
    ScaleDownRound fromKnown =
        new ScaleDownRound(
            etcd,
            () -> {
              List<String> all = new ArrayList<>(List.of("local", "service"));
              all.addAll(known);
              return all;
            },
            sts,
            Clock.systemUTC());
    sts.target = new ScaleTarget.Replicas("db", 3);
    assertThat(fromKnown.run(4, false).decision())
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class, i -> assertThat(i.reason()).isEqualTo("MembersUnknown"));
    known.addAll(List.of(url(0), url(1), url(1)));
    etcd.calls.clear();
    assertThat(fromKnown.run(4, false).decision()).isInstanceOf(ScaleDownDecision.Remove.class);
    assertThat(etcd.calls)
        .as("each endpoint asked once, in order, until one answers")
        .startsWith(
            "linearizable list local",
            "linearizable list service",
            "linearizable list " + url(0),
            "linearizable list " + url(1));
  }

  @Test
  void notSurplusReadsOnlyTheStatefulSet() {
    cluster(3, 1);
    sts.target = new ScaleTarget.Replicas("db", 3);
    assertThat(round.run(2, false).decision()).isInstanceOf(ScaleDownDecision.Idle.class);
    assertThat(etcd.calls).containsExactly("linearizable list local");
    sts.target = new ScaleTarget.Replicas("db", 0);
    etcd.calls.clear();
    assertThat(round.run(2, false).decision()).isInstanceOf(ScaleDownDecision.Idle.class);
    assertThat(etcd.calls).as("a pause reads nothing of etcd").isEmpty();
  }

  @Test
  void aSurplusMemberIsRemovedThroughTheLeaderFirst() {
    cluster(5, 2);
    sts.target = new ScaleTarget.Replicas("db", 3);
    ScaleDownRound.Result r = round.run(5, false);
    assertThat(r.decision()).isInstanceOf(ScaleDownDecision.Remove.class);
    assertThat(r.attempt()).hasValueSatisfying(a -> assertThat(a.result()).isEqualTo("removed"));
    assertThat(etcd.calls).endsWith("remove " + url(1) + " 5");
    assertThat(r.attempt().get().detail()).contains("while member 2 led");
  }

  @Test
  void removingAnAlreadyRemovedMemberIsHarmless() {
    cluster(5, 1);
    sts.target = new ScaleTarget.Replicas("db", 3);
    etcd.removeAnswers.add(new ChangeAnswer.Error("NOT_FOUND", "etcdserver: member not found"));
    assertThat(round.run(5, false).attempt())
        .hasValueSatisfying(a -> assertThat(a.result()).isEqualTo("already-removed"));
  }

  @Test
  void anUnavailableVoterIsSkippedButARefusalIsFinal() {
    cluster(5, 1);
    sts.target = new ScaleTarget.Replicas("db", 3);
    etcd.removeAnswers.add(new ChangeAnswer.Error("UNAVAILABLE", "connection refused"));
    etcd.removeAnswers.add(
        new ChangeAnswer.Error("FAILED_PRECONDITION", "etcdserver: unhealthy cluster"));
    assertThat(round.run(5, false).attempt())
        .hasValueSatisfying(
            a -> {
              assertThat(a.result()).isEqualTo("failed");
              assertThat(a.detail()).contains("connection refused", "unhealthy cluster");
            });
    assertThat(etcd.calls.stream().filter(c -> c.startsWith("remove"))).hasSize(2);
  }

  @Test
  void aSurplusLeaderHandsLeadershipToTheLowestStayingVoter() {
    cluster(4, 4);
    sts.target = new ScaleTarget.Replicas("db", 3);
    ScaleDownRound.Result r = round.run(4, false);
    assertThat(r.decision()).isInstanceOf(ScaleDownDecision.MoveLeader.class);
    assertThat(etcd.calls).endsWith("move-leader " + url(3) + " 1");
    assertThat(r.attempt())
        .hasValueSatisfying(a -> assertThat(a.result()).isEqualTo("leader-moved"));
  }

  @Test
  void theCatchUpPathAsksWhetherTheSurplusPodsAgentsMayStillAct() {
    cluster(5, 1);
    sts.target = new ScaleTarget.Replicas("db", 3);
    sts.pods.put("db-3", SurplusPod.GONE);
    assertThat(round.run(1, true).decision())
        .isInstanceOfSatisfying(
            ScaleDownDecision.Idle.class,
            i -> assertThat(i.reason()).isEqualTo("SurplusPodPresent"));
    sts.pods.put("db-4", SurplusPod.GONE);
    assertThat(round.run(1, true).attempt())
        .hasValueSatisfying(a -> assertThat(a.path()).isEqualTo("scale-down-catch-up"));
  }

  static final class FakeStatefulSet implements StatefulSetApi {
    ScaleTarget target = new ScaleTarget.None("not set");

    /** Pods not listed are terminating: their own agents may act. */
    final Map<String, SurplusPod> pods = new HashMap<>();

    SurplusPod own = SurplusPod.TERMINATING;
    final List<PodEvent> events = new ArrayList<>();

    @Override
    public ScaleTarget target() {
      return target;
    }

    @Override
    public SurplusPod pod(String podName) {
      return pods.getOrDefault(podName, SurplusPod.TERMINATING);
    }

    @Override
    public SurplusPod ownPod() {
      return own;
    }

    @Override
    public KubeAnswer createEvent(String statefulSet, PodEvent event) {
      events.add(event);
      return new KubeAnswer.Done();
    }
  }
}
