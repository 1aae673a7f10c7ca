package io.etcdmemberagent.core.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class MemberStatusLedgerTest {

  static final Instant T0 = Instant.parse("2026-12-04T10:00:00Z");

  static MemberFacts facts(MemberRole role) {
    return new MemberFacts(
        0xa1,
        0xc1,
        "etcd-0",
        List.of("http://p:2380"),
        List.of("http://c:2379"),
        role,
        role.voter(),
        role == MemberRole.LEARNER,
        true,
        0xb2,
        3,
        false,
        "PlainHttpPeerUrl",
        false,
        "Healthy",
        List.of(),
        "3.6.16",
        "3.6.0",
        "1.0");
  }

  static MemberReport report(MemberRole role, long dbSize) {
    return new MemberReport(
        facts(role),
        new MemberFigures(OptionalLong.of(0), dbSize, dbSize, 0),
        List.of(new PodCondition("ready", ConditionStatus.of(role.voter()), "Ready", "m")));
  }

  @Test
  void figuresAloneWaitForTheResyncIntervalTransitionsDoNot() {
    MemberStatusLedger ledger = new MemberStatusLedger(Duration.ofMinutes(5));
    ledger.adopt(List.of(), List.of());
    MemberStatusDocument first = ledger.plan(report(MemberRole.FOLLOWER, 100), T0).orElseThrow();
    ledger.confirm(first, T0);
    assertThat(ledger.plan(report(MemberRole.FOLLOWER, 100), T0.plusSeconds(1))).isEmpty();
    assertThat(ledger.plan(report(MemberRole.FOLLOWER, 200), T0.plusSeconds(60)))
        .as("a bigger db within the interval")
        .isEmpty();
    assertThat(ledger.plan(report(MemberRole.FOLLOWER, 200), T0.plusSeconds(300)))
        .as("once the interval has passed")
        .isPresent();
    MemberStatusDocument leader =
        ledger.plan(report(MemberRole.LEADER, 300), T0.plusSeconds(61)).orElseThrow();
    assertThat(leader.figures().dbSizeBytes())
        .as("a transition carries fresh figures")
        .isEqualTo(300);
  }

  @Test
  void aNewTransitionIsWrittenAndAFirstSightingOfTheSameRoleIsNot() {
    MemberStatusLedger ledger = new MemberStatusLedger(Duration.ofMinutes(5));
    MemberTransition promoted =
        new MemberTransition(MemberRole.FOLLOWER, "PromotedAsVotingMember", "m", T0);
    ledger.adopt(List.of(promoted), List.of());
    ledger.confirm(ledger.plan(report(MemberRole.FOLLOWER, 1), T0).orElseThrow(), T0);
    ledger.append(
        List.of(new MemberTransition(MemberRole.FOLLOWER, MemberReporter.OBSERVED, "m", T0)));
    assertThat(ledger.history()).containsExactly(promoted);
    assertThat(ledger.plan(report(MemberRole.FOLLOWER, 1), T0.plusSeconds(1))).isEmpty();
    MemberTransition gained =
        new MemberTransition(MemberRole.LEADER, "GainedClusterLeadership", "m", T0);
    ledger.append(List.of(gained));
    assertThat(
            ledger
                .plan(report(MemberRole.FOLLOWER, 1), T0.plusSeconds(1))
                .orElseThrow()
                .transitions())
        .containsExactly(promoted, gained);
  }

  @Test
  void aRestartedAgentDoesNotSayAgainThatItsLearnerJoined() {
    MemberStatusLedger ledger = new MemberStatusLedger(Duration.ofMinutes(5));
    MemberTransition joined =
        new MemberTransition(MemberRole.LEARNER, MemberReporter.JOINED_AS_LEARNER, "m", T0);
    ledger.adopt(List.of(joined), List.of());
    ledger.append(
        List.of(
            new MemberTransition(
                MemberRole.LEARNER, MemberReporter.JOINED_AS_LEARNER, "m", T0.plusSeconds(9))));
    assertThat(ledger.history()).containsExactly(joined);
  }

  @Test
  void theHistoryKeepsTheNewestHundred() {
    MemberStatusLedger ledger = new MemberStatusLedger(Duration.ofMinutes(5));
    for (int i = 0; i < 130; i++) {
      ledger.append(
          List.of(new MemberTransition(MemberRole.UNKNOWN, "MemberUnreachable", "#" + i, T0)));
    }
    assertThat(ledger.history()).hasSize(MemberStatusLedger.MAX_TRANSITIONS);
    assertThat(ledger.history().get(0).message()).isEqualTo("#30");
  }

  @Test
  void aConditionSomeoneRemovedIsWrittenAgainAfterTheResyncRead() {
    MemberStatusLedger ledger = new MemberStatusLedger(Duration.ofMinutes(5));
    ledger.adopt(List.of(), List.of());
    MemberStatusDocument doc = ledger.plan(report(MemberRole.FOLLOWER, 1), T0).orElseThrow();
    ledger.confirm(doc, T0);
    ledger.reconcile(doc.transitions(), doc.conditions());
    assertThat(ledger.plan(report(MemberRole.FOLLOWER, 1), T0.plusSeconds(1))).isEmpty();
    ledger.reconcile(doc.transitions(), List.of());
    assertThat(ledger.plan(report(MemberRole.FOLLOWER, 1), T0.plusSeconds(2))).isPresent();
  }
}
