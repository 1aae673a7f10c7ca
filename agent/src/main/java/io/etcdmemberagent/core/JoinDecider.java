package io.etcdmemberagent.core;

import java.util.Optional;

/**
 * Decides {@code join}'s next step. Only this member's own entry is ever added or removed; only the
 * designated bootstrap member may start a new cluster, with an empty data dir, after no cluster
 * endpoint answered for the whole bootstrap wait. Any doubt means wait. Pure.
 */
public final class JoinDecider {

  private JoinDecider() {}

  /**
   * etcd checks at a joining member's first start that its initial cluster lists exactly the
   * cluster's members ("member count is unequal" otherwise); a member added while another one has
   * not started yet would make that other member's initial cluster wrong. So members are added one
   * at a time: the next once the last has started (it may still be a learner catching up).
   */
  public static final String WHY_ONE_PENDING =
      "a new member is added only once every added member has started, so that member's initial"
          + " cluster stays exact (etcd refuses to start on one that lacks a member)";

  /**
   * After this member was added: another member in etcd's answer that has not started either was
   * added concurrently, just before. That member's initial cluster lacks this one, so this one must
   * take its own entry back and wait ({@link #WHY_ONE_PENDING}).
   */
  public static Optional<MemberInfo> addedConcurrentlyWith(Membership.Known afterAdd, long selfId) {
    return afterAdd.members().stream().filter(m -> m.id() != selfId && !m.started()).findFirst();
  }

  public static JoinPlan decide(JoinFacts facts) {
    if (facts.dataDirHasMember()) {
      return new JoinPlan.RestartFromData();
    }
    if (!(facts.membership() instanceof Membership.Known known)) {
      String why = ((Membership.Unknown) facts.membership()).reason();
      if (facts.bootstrapMember() && facts.noClusterFor().compareTo(facts.bootstrapWait()) >= 0) {
        return new JoinPlan.Bootstrap();
      }
      return new JoinPlan.Wait("no cluster endpoint answered: " + why);
    }
    Optional<MemberInfo> self = known.byPeerUrls(facts.peerUrls());
    if (self.isEmpty()) {
      Optional<MemberInfo> pending = known.members().stream().filter(m -> !m.started()).findFirst();
      if (pending.isPresent()) {
        return new JoinPlan.Wait(
            "member "
                + Long.toHexString(pending.get().id())
                + " (peer URLs "
                + pending.get().peerUrls()
                + ") was added but has not started yet; "
                + WHY_ONE_PENDING);
      }
      return new JoinPlan.AddLearner();
    }
    if (!self.get().started()) {
      return new JoinPlan.Reuse(self.get());
    }
    if (facts.replaceLostMember()) {
      return new JoinPlan.Replace(self.get());
    }
    return new JoinPlan.Fail(
        "member "
            + Long.toHexString(self.get().id())
            + " ("
            + self.get().name()
            + ", peer URLs "
            + self.get().peerUrls()
            + ") has started before, but the data dir is empty: its volume was lost. Restore the"
            + " data dir, or rerun with --replace-lost-member to remove this member and re-add it"
            + " as a learner (it then copies the data from the leader).");
  }
}
