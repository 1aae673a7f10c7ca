package io.etcdmemberagent.core.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.readiness.MemberEvaluator;
import io.etcdmemberagent.core.readiness.MemberEvaluatorTest;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.ReadinessPolicy;
import io.etcdmemberagent.core.tls.PeerTlsFacts;
import io.etcdmemberagent.core.tls.PeerUrlFacts;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class EventDetectorTest {

  static final MemberEvaluator EVALUATOR = new MemberEvaluator(new ReadinessPolicy(100));

  static PollOutcome outcome(Instant at, LocalObservation local, PeerTlsFacts peer) {
    MemberSnapshot s =
        new MemberSnapshot(
            at,
            local,
            MemberEvaluatorTest.members(MemberEvaluatorTest.self(false, true)),
            MemberEvaluatorTest.leaderAt(1000),
            List.of(MemberEvaluatorTest.PEER),
            MemberEvaluatorTest.SELF,
            Optional.empty(),
            peer,
            Optional.empty());
    return new PollOutcome(
        1,
        s,
        EVALUATOR.evaluate(s),
        MemberEvaluatorTest.NOT_WATCHING,
        new PromotionDecision.NotALearner("Voter"),
        List.of(),
        Duration.ofMillis(3));
  }

  static final LocalObservation UP =
      MemberEvaluatorTest.answered(
          MemberEvaluatorTest.status(false, MemberEvaluatorTest.LEADER, 1000));
  static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");

  static PeerTlsFacts peer(PeerUrlFacts url) {
    return new PeerTlsFacts.Inspected(List.of(url), T0);
  }

  static List<String> reasons(List<PodEvent> events) {
    return events.stream().map(PodEvent::reason).toList();
  }

  @Test
  void aPeerTlsProblemIsAnEventWhenItAppearsChangesAndEnds() {
    EventDetector d = new EventDetector(Duration.ofSeconds(30));
    PeerTlsFacts ok =
        peer(
            new PeerUrlFacts.Inspected(
                "https://a:2380",
                "served",
                "CN=a",
                T0.minusSeconds(60),
                T0.plus(Duration.ofDays(300)),
                true,
                PeerUrlFacts.Trust.TRUSTED,
                ""));
    PeerTlsFacts plain = peer(new PeerUrlFacts.Plain("http://a:2380"));
    PeerTlsFacts unavailable = peer(new PeerUrlFacts.Unavailable("https://a:2380", "refused"));

    assertThat(reasons(d.observe(outcome(T0, UP, ok)))).doesNotContain("PeerTlsProblem");
    assertThat(reasons(d.observe(outcome(T0, UP, plain)))).containsExactly("PeerTlsProblem");
    assertThat(reasons(d.observe(outcome(T0, UP, plain)))).isEmpty();
    assertThat(reasons(d.observe(outcome(T0, UP, ok)))).containsExactly("PeerTlsValid");
    assertThat(reasons(d.observe(outcome(T0, UP, unavailable)))).isEmpty();
  }

  @Test
  void aLocalMemberSilentForThirtySecondsIsReportedOnceAndItsReturnToo() {
    EventDetector d = new EventDetector(Duration.ofSeconds(30));
    PeerTlsFacts none = new PeerTlsFacts.Unknown("n/a");
    LocalObservation down = MemberEvaluatorTest.REFUSED;
    d.observe(outcome(T0, UP, none));
    assertThat(reasons(d.observe(outcome(T0.plusSeconds(1), down, none)))).isEmpty();
    assertThat(reasons(d.observe(outcome(T0.plusSeconds(20), down, none)))).isEmpty();
    assertThat(reasons(d.observe(outcome(T0.plusSeconds(31), down, none))))
        .containsExactly("LocalMemberDown");
    assertThat(reasons(d.observe(outcome(T0.plusSeconds(60), down, none)))).isEmpty();
    assertThat(reasons(d.observe(outcome(T0.plusSeconds(61), UP, none))))
        .containsExactly("LocalMemberUp");
  }
}
