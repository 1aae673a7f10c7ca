package io.etcdmemberagent.app.membership;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.app.FakeEtcd;
import io.etcdmemberagent.core.ChangeAnswer;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.promotion.PromoteResult;
import io.etcdmemberagent.core.promotion.PromotionAttempt;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

class PromoterTest {

  static final String LOCAL = "http://a:2379";
  static final String LEADER = "http://b:2379";
  static final String OTHER = "http://c:2379";
  static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-02T10:00:00Z"), ZoneOffset.UTC);

  static Membership cluster(boolean selfLearner) {
    return new Membership.Known(
        List.of(
            new MemberInfo(1, "a", List.of("pa"), List.of(LOCAL), selfLearner),
            new MemberInfo(2, "b", List.of("pb"), List.of(LEADER), false),
            new MemberInfo(3, "c", List.of("pc"), List.of(OTHER), false)),
        LEADER);
  }

  static MemberSnapshot snapshot() {
    LocalStatus s = new LocalStatus(1, 2, 100, 100, 2, 1, 1, true, "3.5.30", List.of());
    return new MemberSnapshot(
        CLOCK.instant(),
        new LocalObservation.Answered(s),
        cluster(true),
        new LeaderObservation.Answered(2, 100),
        List.of(),
        1);
  }

  final FakeEtcd etcd = new FakeEtcd();
  final Promoter promoter = new Promoter(etcd, new MembershipReader(etcd, LOCAL, List.of()), CLOCK);

  PromotionAttempt promote() {
    return promoter.promote(new PromotionDecision.Promote(1, 3), snapshot());
  }

  @Test
  void aMemberWhosePodIsLeavingIsNotPromoted() {
    Promoter leaving =
        new Promoter(
            etcd,
            new MembershipReader(etcd, LOCAL, List.of()),
            CLOCK,
            () -> java.util.Optional.of("Pod db-4 is leaving"));
    PromotionAttempt a = leaving.promote(new PromotionDecision.Promote(1, 3), snapshot());
    assertThat(a.result()).isEqualTo(PromoteResult.LEAVING);
    assertThat(a.result().success()).isFalse();
    assertThat(a.detail()).isEqualTo("Pod db-4 is leaving");
    assertThat(etcd.calls).as("nothing sent to etcd").isEmpty();
  }

  @Test
  void promotesThroughTheLeaderNeverThroughItself() {
    PromotionAttempt a = promote();
    assertThat(a.result()).isEqualTo(PromoteResult.PROMOTED);
    assertThat(etcd.calls).containsExactly("promote " + LEADER + " 1");
  }

  @Test
  void anAmbiguousErrorAfterTheServerAppliedItIsSuccess() {
    etcd.promoteAnswers.add(new ChangeAnswer.Error("DEADLINE_EXCEEDED", "no answer within 2000ms"));
    etcd.onPromote = () -> etcd.lists.put(LEADER, cluster(false));
    PromotionAttempt a = promote();
    assertThat(a.result()).isEqualTo(PromoteResult.ALREADY_VOTER);
    assertThat(etcd.calls).containsExactly("promote " + LEADER + " 1", "list " + LEADER);
    assertThat(etcd.calls).doesNotContain("list " + LOCAL);
  }

  @Test
  void etcdsInSyncRefusalIsReportedAsSuch() {
    etcd.promoteAnswers.add(
        new ChangeAnswer.Error(
            "FAILED_PRECONDITION",
            "etcdserver: can only promote a learner member which is in sync with leader"));
    etcd.lists.put(LEADER, cluster(true));
    assertThat(promote().result()).isEqualTo(PromoteResult.NOT_IN_SYNC);
  }

  @Test
  void anUnsettledErrorIsAFailureNotASuccess() {
    etcd.promoteAnswers.add(new ChangeAnswer.Error("UNAVAILABLE", "leader changed"));
    PromotionAttempt a = promote();
    assertThat(a.result()).isEqualTo(PromoteResult.FAILED);
    assertThat(a.detail()).isEqualTo("UNAVAILABLE: leader changed");
  }
}
