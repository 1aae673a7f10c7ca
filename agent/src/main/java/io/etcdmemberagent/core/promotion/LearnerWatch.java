package io.etcdmemberagent.core.promotion;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.MemberState;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * Watches a learner's catch-up across polls. Progress is the applied index moving forward, or being
 * in sync; a learner that has not started shows no index, so only time counts for it. A stalled
 * learner is reported, never removed.
 */
public final class LearnerWatch {

  private final Duration stallTimeout;
  private Instant firstSeen;
  private Instant lastProgress;
  private long lastApplied = -1;
  private Duration joinToVoter;

  public LearnerWatch(Duration stallTimeout) {
    this.stallTimeout = stallTimeout;
  }

  public LearnerProgress observe(MemberSnapshot snapshot, Verdict verdict, Instant now) {
    MemberState state = verdict.state();
    boolean learner = state == MemberState.LEARNER || state == MemberState.NOT_STARTED;
    if (state == MemberState.VOTER && firstSeen != null && joinToVoter == null) {
      joinToVoter = Duration.between(firstSeen, now);
    }
    if (!learner) {
      lastProgress = null;
      lastApplied = -1;
      return new LearnerProgress(
          false, false, Duration.ZERO, OptionalDouble.empty(), Optional.ofNullable(joinToVoter));
    }
    if (firstSeen == null) {
      firstSeen = now;
    }
    if (lastProgress == null) {
      lastProgress = now;
    }
    OptionalDouble ratio = OptionalDouble.empty();
    if (snapshot.local() instanceof LocalObservation.Answered a) {
      long applied = a.status().raftAppliedIndex();
      boolean inSync = verdict.check(CheckNames.IN_SYNC).map(Check::passed).orElse(false);
      if (applied > lastApplied || inSync) {
        lastProgress = now;
      }
      lastApplied = Math.max(lastApplied, applied);
      if (snapshot.leader() instanceof LeaderObservation.Answered l && l.raftIndex() > 0) {
        ratio = OptionalDouble.of(Math.min(1.0, (double) applied / l.raftIndex()));
      }
    }
    Duration since = Duration.between(lastProgress, now);
    return new LearnerProgress(
        true, since.compareTo(stallTimeout) > 0, since, ratio, Optional.ofNullable(joinToVoter));
  }
}
