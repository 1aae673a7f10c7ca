package io.etcdmemberagent.app.poll;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.app.FakeEtcd;
import io.etcdmemberagent.app.membership.MembershipReader;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SnapshotCollectorTest {

  private final List<LocalObservation> silences = new ArrayList<>();

  static final String LOCAL = "http://a:2379";
  static final String B = "http://b:2379";
  static final String C = "http://c:2379";
  static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T10:00:00Z"), ZoneOffset.UTC);

  static SnapshotCollector collector(FakeEtcd etcd, List<String> cluster, List<String> peers) {
    return new SnapshotCollector(
        etcd,
        new MembershipReader(etcd, LOCAL, cluster),
        CLOCK,
        LOCAL,
        peers,
        Optional.empty(),
        new PeerTlsMonitor(
            urls -> new io.etcdmemberagent.core.tls.PeerTlsFacts.Unknown("not inspected"),
            java.time.Duration.ofDays(1)));
  }

  static LocalObservation status(long self, long leader, long raftIndex, boolean learner) {
    return new LocalObservation.Answered(
        new LocalStatus(
            self, leader, raftIndex, raftIndex - 1, 2, 1, 1, learner, "3.5.30", List.of()));
  }

  static Membership cluster(boolean aIsLearner) {
    return new Membership.Known(
        List.of(
            new MemberInfo(1, "a", List.of("http://a:2380"), List.of(LOCAL), aIsLearner),
            new MemberInfo(2, "b", List.of("http://b:2380"), List.of(B), false),
            new MemberInfo(3, "c", List.of("http://c:2380"), List.of(C), false)),
        B);
  }

  @Test
  void aFollowerMakesThreeCallsAndAsksItselfForTheList() {
    FakeEtcd etcd = new FakeEtcd();
    etcd.statuses.put(LOCAL, status(1, 2, 100, false));
    etcd.statuses.put(B, status(2, 2, 120, false));
    etcd.lists.put(LOCAL, cluster(false));
    SnapshotCollector collector = collector(etcd, List.of(), List.of());

    MemberSnapshot s = collector.collect(silences::add);

    assertThat(etcd.calls).containsExactly("status " + LOCAL, "list " + LOCAL, "status " + B);
    assertThat(s.leader()).isEqualTo(new LeaderObservation.Answered(2, 120));
    assertThat(s.rememberedMemberId()).isEqualTo(1);
  }

  @Test
  void theLeaderMakesTwoCallsOnceItsLeadershipWasConfirmed() {
    FakeEtcd etcd = new FakeEtcd();
    etcd.statuses.put(LOCAL, status(1, 1, 100, false));
    etcd.statuses.put(B, status(2, 1, 100, false));
    etcd.lists.put(LOCAL, cluster(false));
    SnapshotCollector collector = collector(etcd, List.of(), List.of());
    collector.collect(silences::add);
    assertThat(etcd.calls)
        .as("not heard from before: another voter confirms")
        .containsExactly("status " + LOCAL, "list " + LOCAL, "status " + B);
    etcd.calls.clear();

    MemberSnapshot s = collector.collect(silences::add);

    assertThat(etcd.calls).containsExactly("status " + LOCAL, "list " + LOCAL);
    assertThat(s.leader()).isEqualTo(new LeaderObservation.Answered(1, 100));
    assertThat(silences).isEmpty();
  }

  @Test
  void aLeaderBackFromSilenceIsNotTakenAtItsWordWhenAnotherVoterFollowsANewLeader() {
    FakeEtcd etcd = new FakeEtcd();
    etcd.statuses.put(LOCAL, status(1, 1, 100, false));
    etcd.statuses.put(B, status(2, 1, 100, false));
    etcd.lists.put(LOCAL, cluster(false));
    etcd.lists.put(B, cluster(false));
    SnapshotCollector collector = collector(etcd, List.of(), List.of());
    collector.collect(silences::add);
    etcd.statuses.put(LOCAL, new LocalObservation.TimedOut("frozen"));
    collector.collect(silences::add);
    // back, answering from its old term before it hears of the new leader (3)
    etcd.statuses.put(LOCAL, status(1, 1, 101, false));
    etcd.statuses.put(B, status(2, 3, 130, false));
    etcd.calls.clear();

    MemberSnapshot s = collector.collect(silences::add);

    assertThat(etcd.calls).containsExactly("status " + LOCAL, "list " + LOCAL, "status " + B);
    assertThat(s.leader()).isInstanceOf(LeaderObservation.Unavailable.class);
    assertThat(((LeaderObservation.Unavailable) s.leader()).reason())
        .contains("right after it was silent", "member 2 follows leader 3");
  }

  @Test
  void aFollowerIsNotInSyncWithAMemberThatNoLongerLeads() {
    FakeEtcd etcd = new FakeEtcd();
    etcd.statuses.put(LOCAL, status(1, 2, 100, false));
    etcd.statuses.put(B, status(2, 3, 120, false));
    etcd.lists.put(LOCAL, cluster(false));
    SnapshotCollector collector = collector(etcd, List.of(), List.of());

    MemberSnapshot s = collector.collect(silences::add);

    assertThat(((LeaderObservation.Unavailable) s.leader()).reason())
        .isEqualTo("member 2 no longer leads: member 2 follows leader 3 in term 2");
  }

  @Test
  void aSilentLocalMemberIsReportedBeforeThePollAsksAnyoneElse() {
    FakeEtcd etcd = new FakeEtcd();
    etcd.statuses.put(LOCAL, new LocalObservation.TimedOut("hung"));
    etcd.lists.put(B, cluster(false));
    List<Integer> callsWhenHeard = new ArrayList<>();
    SnapshotCollector collector = collector(etcd, List.of(B), List.of());

    collector.collect(silent -> callsWhenHeard.add(etcd.calls.size()));

    assertThat(callsWhenHeard).containsExactly(1);
    assertThat(etcd.calls).containsExactly("status " + LOCAL, "list " + B);
  }

  @Test
  void aMemberThatStopsAnsweringWithinThePollIsReportedOnceItsListFails() {
    FakeEtcd etcd = new FakeEtcd();
    etcd.statuses.put(LOCAL, status(1, 2, 100, false));
    etcd.statuses.put(B, status(2, 2, 120, false));
    etcd.lists.put(B, cluster(false));
    SnapshotCollector collector = collector(etcd, List.of(B), List.of());

    MemberSnapshot s = collector.collect(silences::add);

    assertThat(silences).containsExactly(s.local());
    assertThat(s.local()).isInstanceOf(LocalObservation.TimedOut.class);
  }

  @Test
  void aLearnerNeverSendsMembershipCallsToItself() {
    FakeEtcd etcd = new FakeEtcd();
    etcd.statuses.put(LOCAL, status(1, 2, 100, true));
    etcd.statuses.put(B, status(2, 2, 150, false));
    etcd.lists.put(C, cluster(true));
    SnapshotCollector collector = collector(etcd, List.of(C, LOCAL), List.of("http://a:2380"));

    collector.collect(silences::add);
    collector.collect(silences::add);

    assertThat(etcd.calls).doesNotContain("list " + LOCAL);
    assertThat(etcd.calls)
        .containsExactly(
            "status " + LOCAL,
            "list " + C,
            "status " + B,
            "status " + LOCAL,
            "list " + C,
            "status " + B);
  }

  @Test
  void aDownLocalMemberFallsBackToTheOtherVotersItKnows() {
    FakeEtcd etcd = new FakeEtcd();
    etcd.statuses.put(LOCAL, status(1, 2, 100, false));
    etcd.lists.put(LOCAL, cluster(false));
    etcd.lists.put(B, cluster(false));
    SnapshotCollector collector = collector(etcd, List.of(), List.of());
    collector.collect(silences::add);
    etcd.statuses.put(LOCAL, new LocalObservation.TimedOut("hung"));
    etcd.calls.clear();

    MemberSnapshot s = collector.collect(silences::add);

    assertThat(etcd.calls).containsExactly("status " + LOCAL, "list " + B);
    assertThat(s.membership()).isInstanceOf(Membership.Known.class);
    assertThat(s.rememberedMemberId()).isEqualTo(1);
  }

  @Test
  void memberListAttemptsAreBounded() {
    FakeEtcd etcd = new FakeEtcd();
    etcd.statuses.put(LOCAL, status(1, 2, 100, true));
    SnapshotCollector collector =
        collector(
            etcd, List.of("http://v1:1", "http://v2:1", "http://v3:1", "http://v4:1"), List.of());

    MemberSnapshot s = collector.collect(silences::add);

    assertThat(etcd.calls.stream().filter(c -> c.startsWith("list")))
        .hasSize(MembershipReader.MAX_ATTEMPTS);
    assertThat(((Membership.Unknown) s.membership()).reason())
        .contains("v1", "v3")
        .doesNotContain("v4");
  }
}
