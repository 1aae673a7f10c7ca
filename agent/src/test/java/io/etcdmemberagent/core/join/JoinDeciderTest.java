package io.etcdmemberagent.core.join;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.membership.ScaleTarget;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class JoinDeciderTest {

  static final List<String> PEERS = List.of("http://etcd-2.etcd:2380");
  static final Membership.Known TWO =
      new Membership.Known(
          List.of(
              new MemberInfo(1, "etcd-0", List.of("http://etcd-0.etcd:2380"), List.of("c0"), false),
              new MemberInfo(
                  2, "etcd-1", List.of("http://etcd-1.etcd:2380"), List.of("c1"), false)),
          "c0");

  static JoinFacts facts(
      boolean data, Membership m, boolean bootstrap, Duration noCluster, boolean replace) {
    return new JoinFacts(
        "etcd-2",
        PEERS,
        data ? new DataDirMember.Unreadable("not read in this test") : new DataDirMember.Empty(),
        m,
        bootstrap,
        noCluster,
        Duration.ofSeconds(30),
        replace,
        new ScaleTarget.Replicas("etcd", 3));
  }

  static JoinFacts holding(long memberId, long clusterId, Membership m, ScaleTarget target) {
    return new JoinFacts(
        "etcd-2",
        PEERS,
        new DataDirMember.Identified(memberId, clusterId),
        m,
        false,
        Duration.ZERO,
        Duration.ofSeconds(30),
        false,
        target);
  }

  @Test
  void aDataDirWhoseMemberIsStillListedRestartsFromIt() {
    assertThat(JoinDecider.decide(holding(2, 0, TWO, new ScaleTarget.Replicas("etcd", 3))))
        .isEqualTo(new JoinPlan.RestartFromData());
  }

  /** A release switched between plain and TLS peers: etcd would keep the old peer URL. */
  @Test
  void aMemberListedWithPeerUrlsOfAnotherSchemeIsRefusedByName() {
    Membership listedPlain =
        new Membership.Known(
            List.of(
                new MemberInfo(
                    1, "etcd-0", List.of("http://etcd-0.etcd:2380"), List.of("c0"), false),
                new MemberInfo(
                    2, "etcd-2", List.of("http://etcd-2.etcd:2380"), List.of("c2"), false)),
            "c0");
    JoinFacts https =
        new JoinFacts(
            "etcd-2",
            List.of("https://etcd-2.etcd:2380"),
            new DataDirMember.Identified(2, 0),
            listedPlain,
            false,
            Duration.ZERO,
            Duration.ofSeconds(30),
            false,
            new ScaleTarget.Replicas("etcd", 3));
    assertThat(JoinDecider.decide(https))
        .isInstanceOfSatisfying(
            JoinPlan.Fail.class,
            f ->
                assertThat(f.message())
                    .contains(
                        "http://etcd-2.etcd:2380", "https://etcd-2.etcd:2380", "tls.peer.enabled"));
    assertThat(JoinDecider.decide(holding(2, 0, listedPlain, new ScaleTarget.Replicas("etcd", 3))))
        .as("the same scheme restarts from its data as before")
        .isEqualTo(new JoinPlan.RestartFromData());
  }

  @Test
  void aRemovedMembersDataIsSetAsideWhenTheStatefulSetWantsTheOrdinalAgain() {
    assertThat(JoinDecider.decide(holding(9, 0, TWO, new ScaleTarget.Replicas("etcd", 3))))
        .isEqualTo(new JoinPlan.SetAsideRemovedData(9));
  }

  @Test
  void aRemovedMemberStaysOutWhileItsOrdinalIsSurplus() {
    assertThat(JoinDecider.decide(holding(9, 0, TWO, new ScaleTarget.Replicas("etcd", 2))))
        .isInstanceOfSatisfying(
            JoinPlan.Fail.class, f -> assertThat(f.message()).contains("still surplus"));
  }

  @Test
  void anUnreadStatefulSetIsAskedAgainNotTakenAsNoStatefulSet() {
    assertThat(JoinDecider.decide(holding(9, 0, TWO, new ScaleTarget.Unread("503"))))
        .isInstanceOfSatisfying(
            JoinPlan.Wait.class, w -> assertThat(w.reason()).contains("was not read: 503"));
  }

  @Test
  void onlyAListThatOmitsTheDataDirsMemberNeedsConfirming() {
    assertThat(JoinDecider.listOmitsDataDirMember(new DataDirMember.Identified(9, 0), TWO))
        .isTrue();
    assertThat(JoinDecider.listOmitsDataDirMember(new DataDirMember.Identified(2, 0), TWO))
        .isFalse();
    assertThat(
            JoinDecider.listOmitsDataDirMember(
                new DataDirMember.Identified(9, 0), new Membership.Unknown("down")))
        .isFalse();
    assertThat(JoinDecider.listOmitsDataDirMember(new DataDirMember.Empty(), TWO)).isFalse();
  }

  @Test
  void aRemovedMemberIsJudgedByOrdinalsStartToo() {
    // ordinals.start 3, replicas 3: etcd-2 is below the range, surplus
    assertThat(JoinDecider.decide(holding(9, 0, TWO, new ScaleTarget.Replicas("etcd", 3, 3))))
        .isInstanceOfSatisfying(
            JoinPlan.Fail.class, f -> assertThat(f.message()).contains("ordinals 3..5"));
  }

  @Test
  void withoutAStatefulSetARemovedMembersDataIsLeftToAPerson() {
    assertThat(JoinDecider.decide(holding(9, 0, TWO, new ScaleTarget.None("--kube=off"))))
        .isInstanceOfSatisfying(
            JoinPlan.Fail.class, f -> assertThat(f.message()).contains("a person decides"));
    assertThat(JoinDecider.decide(holding(9, 0, TWO, new ScaleTarget.Replicas("other", 3))))
        .isInstanceOf(JoinPlan.Fail.class);
  }

  @Test
  void dataOfAnotherClusterIsNeverSetAside() {
    Membership.Known cluster7 = new Membership.Known(TWO.members(), "c0", 7);
    assertThat(JoinDecider.decide(holding(9, 8, cluster7, new ScaleTarget.Replicas("etcd", 3))))
        .isInstanceOfSatisfying(
            JoinPlan.Fail.class, f -> assertThat(f.message()).contains("belongs to cluster 8"));
    assertThat(JoinDecider.decide(holding(9, 7, cluster7, new ScaleTarget.Replicas("etcd", 3))))
        .isEqualTo(new JoinPlan.SetAsideRemovedData(9));
  }

  @Test
  void withoutAnAnswerARemovedMemberIsNotAssumed() {
    assertThat(
            JoinDecider.decide(
                holding(9, 0, new Membership.Unknown("down"), new ScaleTarget.Replicas("etcd", 3))))
        .isEqualTo(new JoinPlan.RestartFromData());
  }

  static Membership.Known with(MemberInfo self) {
    return new Membership.Known(List.of(TWO.members().get(0), TWO.members().get(1), self), "c0");
  }

  @Test
  void aDataDirWithAMemberRestartsWhateverTheClusterSays() {
    assertThat(
            JoinDecider.decide(
                facts(true, new Membership.Unknown("down"), true, Duration.ofHours(1), true)))
        .isEqualTo(new JoinPlan.RestartFromData());
  }

  @Test
  void aNewMemberIsAddedAsALearner() {
    assertThat(JoinDecider.decide(facts(false, TWO, false, Duration.ZERO, false)))
        .isEqualTo(new JoinPlan.AddLearner());
  }

  @Test
  void anAddedButUnstartedMemberIsReusedNotAddedAgain() {
    MemberInfo self = new MemberInfo(3, "", PEERS, List.of(), true);
    assertThat(JoinDecider.decide(facts(false, with(self), false, Duration.ZERO, false)))
        .isEqualTo(new JoinPlan.Reuse(self));
  }

  @Test
  void nothingIsAddedWhileAnotherAddedMemberHasNotStarted() {
    MemberInfo other = new MemberInfo(4, "", List.of("http://etcd-3.etcd:2380"), List.of(), true);
    JoinPlan plan = JoinDecider.decide(facts(false, with(other), false, Duration.ZERO, false));
    assertThat(plan).isInstanceOf(JoinPlan.Wait.class);
    assertThat(((JoinPlan.Wait) plan).reason()).contains("member 4", "has not started yet");
    MemberInfo started = new MemberInfo(4, "etcd-3", other.peerUrls(), List.of("c3"), true);
    assertThat(JoinDecider.decide(facts(false, with(started), false, Duration.ZERO, false)))
        .as("a started learner does not hold the next member back")
        .isEqualTo(new JoinPlan.AddLearner());
  }

  @Test
  void aConcurrentlyAddedUnstartedMemberIsFoundInTheAddAnswer() {
    MemberInfo self = new MemberInfo(3, "", PEERS, List.of(), true);
    MemberInfo other = new MemberInfo(4, "", List.of("http://etcd-3.etcd:2380"), List.of(), true);
    Membership.Known both =
        new Membership.Known(
            List.of(TWO.members().get(0), TWO.members().get(1), other, self), "c0");
    assertThat(JoinDecider.addedConcurrentlyWith(both, 3)).contains(other);
    assertThat(JoinDecider.addedConcurrentlyWith(with(self), 3)).isEmpty();
  }

  @Test
  void aStartedMemberWithAnEmptyDataDirLostItsVolume() {
    MemberInfo self = new MemberInfo(3, "etcd-2", PEERS, List.of("c2"), false);
    JoinPlan plan = JoinDecider.decide(facts(false, with(self), false, Duration.ZERO, false));
    assertThat(plan).isInstanceOf(JoinPlan.Fail.class);
    assertThat(((JoinPlan.Fail) plan).message())
        .contains("volume was lost", "--replace-lost-member");
    assertThat(JoinDecider.decide(facts(false, with(self), false, Duration.ZERO, true)))
        .isEqualTo(new JoinPlan.Replace(self));
  }

  @Test
  void onlyTheBootstrapMemberBootstrapsAndOnlyAfterTheWholeWait() {
    Membership none = new Membership.Unknown("connection refused");
    assertThat(JoinDecider.decide(facts(false, none, false, Duration.ofHours(1), false)))
        .isInstanceOf(JoinPlan.Wait.class);
    assertThat(JoinDecider.decide(facts(false, none, true, Duration.ofSeconds(29), false)))
        .isInstanceOf(JoinPlan.Wait.class);
    assertThat(JoinDecider.decide(facts(false, none, true, Duration.ofSeconds(30), false)))
        .isEqualTo(new JoinPlan.Bootstrap());
    assertThat(JoinDecider.decide(facts(false, TWO, true, Duration.ofHours(1), false)))
        .as("a bootstrap member that finds a cluster joins it")
        .isEqualTo(new JoinPlan.AddLearner());
  }

  @Test
  void theInitialClusterListsEveryMemberWithPlaceholdersForUnstartedOthers() {
    Membership.Known members =
        new Membership.Known(
            List.of(
                TWO.members().get(0),
                new MemberInfo(0xabc, "", List.of("http://etcd-3.etcd:2380"), List.of(), true),
                new MemberInfo(3, "", PEERS, List.of(), true)),
            "c0");
    assertThat(InitialCluster.forJoin(members, "etcd-2", PEERS))
        .isEqualTo(
            "etcd-0=http://etcd-0.etcd:2380,unstarted-abc=http://etcd-3.etcd:2380,etcd-2=http://etcd-2.etcd:2380");
    assertThat(InitialCluster.forSelf("etcd-0", List.of("http://a:2380")))
        .isEqualTo("etcd-0=http://a:2380");
  }
}
