package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.AgentLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The invariant checker must catch what it promises to catch, on histories built by hand. */
class InvariantsTest {

  private static final long MS = 1_000_000;
  private final Invariants invariants =
      new Invariants(Duration.ofMillis(1500), Duration.ofSeconds(5), Duration.ofSeconds(2));

  private static History.Snapshot history(
      List<History.Verdict> verdicts, List<History.Truth> truths, List<History.Mark> marks) {
    return new History.Snapshot(verdicts, truths, marks);
  }

  /** Truth every 100 ms: a healthy voter until {@code downAtMs} (never when negative). */
  private static List<History.Truth> truthDownAt(long downAtMs, long untilMs) {
    List<History.Truth> truths = new ArrayList<>();
    for (long t = 0; t <= untilMs; t += 100) {
      boolean up = downAtMs < 0 || t < downAtMs;
      truths.add(new History.Truth(t * MS, up, up, up, false));
    }
    return truths;
  }

  /** /readyz every 50 ms: 200 until {@code failsAtMs}, then 503. */
  private static List<History.Verdict> readyUntil(long failsAtMs, long untilMs, String cond) {
    List<History.Verdict> verdicts = new ArrayList<>();
    for (long t = 0; t <= untilMs; t += 50) {
      verdicts.add(new History.Verdict(t * MS, t < failsAtMs ? 200 : 503, cond));
    }
    return verdicts;
  }

  @Test
  void readinessThatFollowsTheFaultWithinTheBoundPasses() {
    var h = history(readyUntil(3400, 6000, ""), truthDownAt(2000, 6000), List.of());
    assertThat(invariants.readyOnlyForAHealthyVoter(h)).isEmpty();
  }

  @Test
  void aPollFresherThanTheLastTruthSampleIsSettledByTheNextSample() {
    List<History.Truth> truths = new ArrayList<>();
    for (long t = 0; t <= 6000; t += 100) {
      boolean leader = t >= 4100; // a leader elected between the samples at 4000 and 4100
      truths.add(new History.Truth(t * MS, true, true, leader, false));
    }
    List<History.Verdict> early = List.of(new History.Verdict(4060 * MS, 200, ""));
    assertThat(invariants.readyOnlyForAHealthyVoter(history(early, truths, List.of()))).isEmpty();

    List<History.Verdict> tooEarly = List.of(new History.Verdict(3860 * MS, 200, ""));
    assertThat(invariants.readyOnlyForAHealthyVoter(history(tooEarly, truths, List.of())))
        .as("the next sample (3900) still has no leader")
        .hasSize(1);
  }

  @Test
  void aSlowSampleBeforeThe200DelaysTheSampleThatSettlesIt() {
    List<History.Truth> truths = new ArrayList<>();
    for (long t = 0; t < 4000; t += 100) {
      truths.add(new History.Truth(t * MS, true, true, false, false, t * MS + 5 * MS));
    }
    // the sample at 4000 waited 350 ms for its answers (no leader yet), the next one starts at 4350
    truths.add(new History.Truth(4000 * MS, true, true, false, false, 4350 * MS));
    truths.add(new History.Truth(4350 * MS, true, true, true, false, 4355 * MS));
    List<History.Verdict> ready = List.of(new History.Verdict(4060 * MS, 200, ""));
    assertThat(invariants.readyOnlyForAHealthyVoter(history(ready, truths, List.of()))).isEmpty();

    truths.set(
        truths.size() - 1, new History.Truth(4350 * MS, true, true, false, false, 4355 * MS));
    assertThat(invariants.readyOnlyForAHealthyVoter(history(ready, truths, List.of())))
        .as("the delayed sample still has no leader")
        .singleElement()
        .asString()
        .contains("answered, voter, no leader, sampled in 350 ms; next truth")
        .contains("next truth t+290ms: answered, voter, no leader");
  }

  @Test
  void readinessThatOutlivesTheFaultIsCaught() {
    var h = history(readyUntil(4000, 6000, ""), truthDownAt(2000, 6000), List.of());
    assertThat(invariants.readyOnlyForAHealthyVoter(h))
        .isNotEmpty()
        .first()
        .asString()
        .contains("not a healthy voter");
  }

  @Test
  void readyForALearnerIsCaughtAtOnce() {
    List<History.Truth> learner = new ArrayList<>();
    for (long t = 0; t <= 3000; t += 100) {
      learner.add(new History.Truth(t * MS, true, false, true, false));
    }
    var h = history(readyUntil(Long.MAX_VALUE, 3000, ""), learner, List.of());
    assertThat(invariants.readyOnlyForAHealthyVoter(h)).isNotEmpty();
  }

  @Test
  void notComingBackAfterAFaultIsCaught() {
    var end = new History.Mark(1000 * MS, History.Kind.FAULT_ENDS, "etcd restarted");
    var stuck = history(readyUntil(500, 8000, ""), truthDownAt(-1, 8000), List.of(end));
    assertThat(invariants.readyAgainAfterEveryFault(stuck)).hasSize(1);

    List<History.Verdict> back = new ArrayList<>(readyUntil(500, 3000, ""));
    back.add(new History.Verdict(3050 * MS, 200, ""));
    var recovered = history(back, truthDownAt(-1, 3050), List.of(end));
    assertThat(invariants.readyAgainAfterEveryFault(recovered)).isEmpty();
  }

  @Test
  void aFlipInsideASteadyWindowIsCaught() {
    var marks =
        List.of(
            new History.Mark(1000 * MS, History.Kind.STEADY_BEGINS, "pauses"),
            new History.Mark(3000 * MS, History.Kind.STEADY_ENDS, "pauses"));
    List<History.Verdict> verdicts = new ArrayList<>(readyUntil(Long.MAX_VALUE, 4000, ""));
    assertThat(invariants.noFlappingInSteadyWindows(history(verdicts, List.of(), marks))).isEmpty();
    verdicts.set(40, new History.Verdict(2000 * MS, 503, ""));
    assertThat(invariants.noFlappingInSteadyWindows(history(verdicts, List.of(), marks)))
        .hasSize(1);
  }

  @Test
  void aConditionThatDoesNotFollowIsCaughtUnlessTheApiWasBroken() {
    // /readyz fails at 1 s; the condition stays True to the end (6 s)
    var stale = history(readyUntil(1000, 6000, "True"), List.of(), List.of());
    assertThat(invariants.conditionFollowsReadiness(stale)).isNotEmpty();

    var apiDown =
        history(
            readyUntil(1000, 6000, "True"),
            List.of(),
            List.of(new History.Mark(500 * MS, History.Kind.FAULT_BEGINS, "api down")));
    assertThat(invariants.conditionFollowsReadiness(apiDown)).isEmpty();

    List<History.Verdict> following = new ArrayList<>();
    for (long t = 0; t <= 6000; t += 50) {
      following.add(new History.Verdict(t * MS, t < 1000 ? 200 : 503, t < 1800 ? "True" : "False"));
    }
    assertThat(invariants.conditionFollowsReadiness(history(following, List.of(), List.of())))
        .isEmpty();
  }

  @Test
  void promotesOfAnotherMemberTooLaggingOrOverlappingAreCaught() {
    String ok =
        "{\"ts\":\"2026-12-03T07:00:00.100Z\",\"event\":\"promoted\",\"seq\":4,\"result\":\"promoted\","
            + "\"memberId\":\"abc\",\"lag\":12,\"tookMs\":30,\"detail\":\"x\"}";
    assertThat(Invariants.promotesFollowTheRule(new AgentLog(List.of(ok)), 0xabc, 100)).isEmpty();

    String other = ok.replace("\"abc\"", "\"abd\"");
    String lagging = ok.replace("\"lag\":12", "\"lag\":500");
    assertThat(Invariants.promotesFollowTheRule(new AgentLog(List.of(other)), 0xabc, 100))
        .hasSize(1);
    assertThat(Invariants.promotesFollowTheRule(new AgentLog(List.of(lagging)), 0xabc, 100))
        .hasSize(1);

    String failed =
        ok.replace("promoted\",\"seq\"", "promotion-failed\",\"seq\"")
            .replace("07:00:00.100Z", "07:00:00.200Z")
            .replace("\"tookMs\":30", "\"tookMs\":300");
    assertThat(Invariants.promotesFollowTheRule(new AgentLog(List.of(ok, failed)), 0xabc, 100))
        .singleElement()
        .asString()
        .contains("before the previous one ended");
  }

  @Test
  void aConditionReadLateIsJudgedAtItsOwnReadTime() {
    // /readyz turns 503 at 5000 ms; one sample at 4200 ms read 200, but the recorder was held up
    // for 900 ms before it read the condition, False by then: not the agent's fault
    List<History.Verdict> verdicts = new ArrayList<>();
    for (long t = 0; t < 8000; t += 50) {
      verdicts.add(new History.Verdict(t * MS, t < 5000 ? 200 : 503, t < 5000 ? "True" : "False"));
    }
    int i = (int) (4200 / 50);
    verdicts.set(i, new History.Verdict(4200 * MS, 200, "False", 5100 * MS));
    assertThat(invariants.conditionFollowsReadiness(history(verdicts, List.of(), List.of())))
        .isEmpty();
    // the same disagreement read at once is the agent's
    verdicts.set(i, new History.Verdict(4200 * MS, 200, "False"));
    assertThat(invariants.conditionFollowsReadiness(history(verdicts, List.of(), List.of())))
        .hasSize(1);
  }
}
