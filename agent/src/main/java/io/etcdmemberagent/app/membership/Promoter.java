package io.etcdmemberagent.app.membership;

import io.etcdmemberagent.core.ChangeAnswer;
import io.etcdmemberagent.core.EtcdGateway;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.promotion.PromoteResult;
import io.etcdmemberagent.core.promotion.PromotionAttempt;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Sends one {@code MemberPromote} for this member and settles what happened. Promote is not
 * idempotent and its errors are ambiguous, so after any error the member list is read again through
 * a voter: already a voter is success. Called on the poll thread only, so at most one promote is
 * ever in flight.
 */
public final class Promoter {

  private final EtcdGateway etcd;
  private final MembershipReader membership;
  private final Clock clock;
  private final Supplier<Optional<String>> leaving;

  public Promoter(EtcdGateway etcd, MembershipReader membership, Clock clock) {
    this(etcd, membership, clock, Optional::empty);
  }

  /**
   * {@code leaving}: asked right before each promote (not each poll: a promote is rare), why this
   * member's Pod is leaving, if it is; then nothing is sent.
   */
  public Promoter(
      EtcdGateway etcd,
      MembershipReader membership,
      Clock clock,
      Supplier<Optional<String>> leaving) {
    this.etcd = etcd;
    this.membership = membership;
    this.clock = clock;
    this.leaving = leaving;
  }

  public PromotionAttempt promote(PromotionDecision.Promote decision, MemberSnapshot snapshot) {
    Instant at = clock.instant();
    long started = System.nanoTime();
    Optional<String> refusal = leaving.get();
    if (refusal.isPresent()) {
      return new PromotionAttempt(
          at,
          decision.memberId(),
          decision.lag(),
          PromoteResult.LEAVING,
          refusal.get(),
          Duration.ofNanos(System.nanoTime() - started));
    }
    List<String> targets = targets(snapshot);
    ChangeAnswer answer =
        targets.isEmpty()
            ? new ChangeAnswer.Error("UNAVAILABLE", "no voter endpoint known")
            : etcd.promote(targets.get(0), decision.memberId());
    PromoteResult result;
    String detail;
    if (answer instanceof ChangeAnswer.Accepted) {
      result = PromoteResult.PROMOTED;
      detail = "accepted by " + targets.get(0);
    } else {
      ChangeAnswer.Error error = (ChangeAnswer.Error) answer;
      result = settle(error, decision.memberId(), snapshot);
      detail = error.code() + ": " + error.message();
    }
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    return new PromotionAttempt(at, decision.memberId(), decision.lag(), result, detail, took);
  }

  /** The leader first (no forwarding hop), then the other voters. */
  private List<String> targets(MemberSnapshot snapshot) {
    Set<String> targets = new LinkedHashSet<>();
    if (snapshot.local() instanceof LocalObservation.Answered a
        && snapshot.membership() instanceof Membership.Known known) {
      known
          .byId(a.status().leaderId())
          .filter(leader -> !leader.learner())
          .ifPresent(leader -> targets.addAll(leader.clientUrls()));
    }
    targets.addAll(membership.voters(snapshot.local(), snapshot.membership()));
    return new ArrayList<>(targets);
  }

  private PromoteResult settle(ChangeAnswer.Error error, long memberId, MemberSnapshot snapshot) {
    Membership after = membership.read(snapshot.local(), snapshot.membership());
    if (after instanceof Membership.Known known) {
      Optional<MemberInfo> self = known.byId(memberId);
      if (self.isEmpty()) {
        // Removed only when etcd said so too; a list alone could be a stale read.
        PromoteResult byError = PromoteResult.ofError(error);
        return byError == PromoteResult.NOT_FOUND ? byError : PromoteResult.FAILED;
      }
      if (!self.get().learner()) {
        return PromoteResult.ALREADY_VOTER;
      }
    }
    return PromoteResult.ofError(error);
  }
}
