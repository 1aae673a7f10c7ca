package io.etcdmemberagent.core.poll;

import io.etcdmemberagent.core.promotion.LearnerProgress;
import io.etcdmemberagent.core.promotion.PromotionAttempt;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.Verdict;
import java.time.Duration;
import java.util.List;

/**
 * One finished poll: what was seen, what was decided (readiness, learner progress, promotion), the
 * promotion history so far, and how long the poll took.
 */
public record PollOutcome(
    long sequence,
    MemberSnapshot snapshot,
    Verdict verdict,
    LearnerProgress progress,
    PromotionDecision promotion,
    List<PromotionAttempt> promotions,
    Duration took) {

  public PollOutcome {
    promotions = List.copyOf(promotions);
  }
}
