package io.etcdmemberagent.core.promotion;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * How a learner's catch-up goes: {@code watching} while this member is a learner (started or not);
 * {@code stalled} when it made no progress for the stall timeout; {@code catchUpRatio} local
 * applied / leader committed; {@code joinToVoter} from first seen as learner to voter.
 */
public record LearnerProgress(
    boolean watching,
    boolean stalled,
    Duration sinceProgress,
    OptionalDouble catchUpRatio,
    Optional<Duration> joinToVoter) {}
