package io.etcdmemberagent.core;

import java.util.Optional;

/**
 * Decides {@code join}'s next step. Only this member's own entry is ever added or removed; only the
 * designated bootstrap member may start a new cluster, with an empty data dir, after no cluster
 * endpoint answered for the whole bootstrap wait. Any doubt means wait. Pure.
 */
public final class JoinDecider {

  private JoinDecider() {}

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
