package io.etcdmemberagent.core.readiness;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.MemberState;
import io.etcdmemberagent.core.publish.DesiredConditions;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ReadinessHysteresisTest {

  private static final Instant NOW = Instant.parse("2026-12-03T10:00:00Z");

  private static Verdict verdict(boolean healthy) {
    List<Check> checks =
        CheckNames.ALL.stream()
            .map(
                name ->
                    healthy || !name.equals(CheckNames.LEADER)
                        ? Check.pass(name, "Passed", name + " passes")
                        : Check.fail(name, "NoLeader", "no leader"))
            .toList();
    return new Verdict(
        NOW,
        MemberState.VOTER,
        "a started voting member",
        1,
        OptionalLong.of(0),
        checks,
        List.of(),
        Optional.empty(),
        Check.pass(CheckNames.PEER_TLS, "PeerTlsValid", "ok"));
  }

  private static List<Boolean> readiness(ReadinessHysteresis h, boolean... healthy) {
    return java.util.stream.IntStream.range(0, healthy.length)
        .mapToObj(i -> h.apply(verdict(healthy[i])).ready())
        .toList();
  }

  @Test
  void withAThresholdOfOneEveryVerdictPassesUnchanged() {
    ReadinessHysteresis h = new ReadinessHysteresis(1);
    Verdict healthy = verdict(true);
    assertThat(h.apply(healthy)).isSameAs(healthy);
    assertThat(readiness(h, false, true, false, true)).containsExactly(false, true, false, true);
  }

  @Test
  void readyOnlyAfterThatManyHealthyPollsInARowAndNotReadyAtOnce() {
    ReadinessHysteresis h = new ReadinessHysteresis(3);
    assertThat(readiness(h, true, true, true, true, false, true, true, false, true, true, true))
        .containsExactly(false, false, true, true, false, false, false, false, false, false, true);
  }

  @Test
  void aHeldBackVerdictNamesTheSettlingCheckWithAStableMessage() {
    ReadinessHysteresis h = new ReadinessHysteresis(3);
    Verdict first = h.apply(verdict(true));
    Verdict second = h.apply(verdict(true));
    assertThat(first.check(CheckNames.SETTLING))
        .hasValueSatisfying(c -> assertThat(c.passed()).isFalse());
    assertThat(first.check(CheckNames.SETTLING)).isEqualTo(second.check(CheckNames.SETTLING));
    assertThat(DesiredConditions.from(first, MemberEvaluatorTest.NOT_WATCHING))
        .as("no condition changes between held-back polls, so no patch")
        .isEqualTo(DesiredConditions.from(second, MemberEvaluatorTest.NOT_WATCHING));
  }

  @Test
  void aFailedVerdictIsReportedAsItIs() {
    ReadinessHysteresis h = new ReadinessHysteresis(5);
    Verdict failed = verdict(false);
    assertThat(h.apply(failed)).isSameAs(failed);
  }
}
