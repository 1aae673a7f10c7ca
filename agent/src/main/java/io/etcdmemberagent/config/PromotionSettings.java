package io.etcdmemberagent.config;

import java.time.Duration;

/** The {@code --promote*}, {@code --learner-poll-interval} and {@code --stall-timeout} flags. */
public record PromotionSettings(
    boolean enabled,
    int stablePolls,
    Duration learnerPollInterval,
    Duration backoff,
    Duration maxBackoff,
    Duration stallTimeout) {}
