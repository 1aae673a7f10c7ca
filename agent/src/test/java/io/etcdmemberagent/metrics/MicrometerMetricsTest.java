package io.etcdmemberagent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.LearnerProgress;
import io.etcdmemberagent.core.promotion.PromoteResult;
import io.etcdmemberagent.core.promotion.PromotionAttempt;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.readiness.MemberEvaluator;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.ReadinessPolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class MicrometerMetricsTest {

  static PollOutcome learnerOutcome() {
    MemberSnapshot snapshot =
        new MemberSnapshot(
            Instant.parse("2026-12-02T10:00:00Z"),
            new LocalObservation.Answered(
                new LocalStatus(1, 2, 900, 880, 5, 8192, 4096, true, "3.5.30", List.of())),
            new Membership.Known(
                List.of(
                    new MemberInfo(1, "a", List.of("p1"), List.of("c1"), true),
                    new MemberInfo(2, "b", List.of("p2"), List.of("c2"), false)),
                "c2"),
            new LeaderObservation.Answered(2, 1000),
            List.of(),
            0);
    var verdict = new MemberEvaluator(new ReadinessPolicy(5000)).evaluate(snapshot);
    return new PollOutcome(
        1,
        snapshot,
        verdict,
        new LearnerProgress(true, false, Duration.ZERO, OptionalDouble.of(0.88), Optional.empty()),
        new PromotionDecision.Hold("Lagging", "lag 120 > 100"),
        List.of(),
        Duration.ofMillis(12));
  }

  @Test
  void exposesTheMemberViewUnderOurPrefix() {
    try (MicrometerMetrics metrics = new MicrometerMetrics()) {
      metrics.recordPoll(learnerOutcome());
      String text = text(metrics.scrape(null));
      assertThat(text)
          .contains("etcd_member_agent_is_learner 1.0")
          .contains("etcd_member_agent_is_voter 0.0")
          .contains("etcd_member_agent_ready 0.0")
          .contains("etcd_member_agent_lag_entries 120.0")
          .contains("etcd_member_agent_applied_index 880.0")
          .contains("etcd_member_agent_leader_raft_index 1000.0")
          .contains("etcd_member_agent_db_size_bytes 8192.0")
          .contains("etcd_member_agent_db_size_in_use_bytes 4096.0")
          .contains("etcd_member_agent_has_leader 1.0")
          .contains("etcd_member_agent_check_passed{check=\"voter\"} 0.0")
          .contains("etcd_member_agent_check_passed{check=\"in-sync\"} 1.0")
          .contains("etcd_member_agent_member_state{state=\"Learner\"} 1.0")
          .contains("etcd_member_agent_polls_total 1.0")
          .contains("etcd_member_agent_poll_duration_seconds_bucket")
          .contains("etcd_member_agent_learner_catch_up_ratio 0.88")
          .contains("etcd_member_agent_promotions_total{result=\"promoted\"} 0.0")
          .contains("jvm_memory_used_bytes");
    }
  }

  @Test
  void countsPollErrorsByCallAndReason() {
    try (MicrometerMetrics metrics = new MicrometerMetrics()) {
      PollOutcome ok = learnerOutcome();
      MemberSnapshot down =
          new MemberSnapshot(
              ok.snapshot().takenAt(),
              new LocalObservation.TimedOut("x"),
              new Membership.Unknown("y"),
              new LeaderObservation.Unavailable("z"),
              List.of(),
              0);
      var verdict = new MemberEvaluator(new ReadinessPolicy(5000)).evaluate(down);
      metrics.recordPoll(
          new PollOutcome(
              2, down, verdict, ok.progress(), ok.promotion(), List.of(), Duration.ofSeconds(1)));
      assertThat(text(metrics.scrape(null)))
          .contains(
              "etcd_member_agent_poll_errors_total{call=\"local_status\",reason=\"timeout\"} 1.0")
          .contains(
              "etcd_member_agent_poll_errors_total{call=\"member_list\",reason=\"unavailable\"} 1.0")
          .contains("etcd_member_agent_lag_entries NaN");
    }
  }

  @Test
  void countsPromotionsByResult() {
    try (MicrometerMetrics metrics = new MicrometerMetrics()) {
      metrics.recordPoll(learnerOutcome());
      metrics.recordPromotion(
          new PromotionAttempt(
              Instant.EPOCH, 1, 3, PromoteResult.NOT_IN_SYNC, "refused", Duration.ofMillis(5)));
      metrics.recordPromotion(
          new PromotionAttempt(
              Instant.EPOCH, 1, 3, PromoteResult.PROMOTED, "ok", Duration.ofMillis(7)));
      assertThat(text(metrics.scrape(null)))
          .contains("etcd_member_agent_promotions_total{result=\"not_in_sync\"} 1.0")
          .contains("etcd_member_agent_promotions_total{result=\"promoted\"} 1.0")
          .contains("etcd_member_agent_promote_attempt_duration_seconds_count 2");
    }
  }

  @Test
  void speaksOpenMetricsWhenAsked() {
    try (MicrometerMetrics metrics = new MicrometerMetrics()) {
      metrics.recordPoll(learnerOutcome());
      String accept = "application/openmetrics-text; version=1.0.0";
      assertThat(metrics.contentType(accept)).startsWith("application/openmetrics-text");
      assertThat(text(metrics.scrape(accept))).endsWith("# EOF\n");
      assertThat(metrics.contentType("text/plain")).startsWith("text/plain; version=0.0.4");
    }
  }

  private static String text(byte[] exposition) {
    return new String(exposition, java.nio.charset.StandardCharsets.UTF_8);
  }
}
