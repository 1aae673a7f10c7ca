package io.etcdmemberagent.core.promotion;

import java.time.Duration;
import java.time.Instant;

/** One promotion attempt, for the history in /status and for metrics. */
public record PromotionAttempt(
    Instant at, long memberId, long lag, PromoteResult result, String detail, Duration took) {}
