package io.etcdmemberagent.core.join;

import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.membership.ScaleDownRule;
import io.etcdmemberagent.core.membership.ScaleTarget;
import java.util.Optional;
import java.util.OptionalInt;

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

  /**
   * The cluster lists this member (by name) with peer URLs of another scheme than it would
   * advertise now: etcd keeps peer URLs in its member list and never takes a restarted member's new
   * ones, so the others would look for it where it no longer answers (a release switched between
   * plain and TLS peers). A person decides.
   */
  static Optional<String> peerSchemeChange(JoinFacts facts) {
    if (!(facts.membership() instanceof Membership.Known known) || facts.peerUrls().isEmpty()) {
      return Optional.empty();
    }
    String wanted = scheme(facts.peerUrls().get(0));
    return known.members().stream()
        .filter(m -> m.name().equals(facts.name()))
        .flatMap(m -> m.peerUrls().stream())
        .filter(u -> !scheme(u).equals(wanted))
        .findFirst()
        .map(
            listed ->
                "the cluster lists this member's peer URL as "
                    + listed
                    + ", and this Pod would advertise "
                    + facts.peerUrls().get(0)
                    + ": etcd keeps peer URLs in its member list, so a member cannot switch"
                    + " between http and https peers by restarting (chart: keep tls.peer.enabled as"
                    + " the release was installed)");
  }

  private static String scheme(String url) {
    int colon = url.indexOf(':');
    return colon < 0 ? "" : url.substring(0, colon);
  }

  /**
   * The data dir holds a member the cluster no longer lists: etcd would refuse to start on it ("the
   * member has been permanently removed from the cluster"). Only a StatefulSet that wants this
   * ordinal again lets its data be set aside; otherwise a person decides.
   */
  private static JoinPlan removedMember(JoinFacts facts, long removedId) {
    String what =
        "the data dir holds member "
            + Long.toHexString(removedId)
            + ", which the cluster no longer lists (removed)";
    if (facts.target() instanceof ScaleTarget.Unread unread) {
      return new JoinPlan.Wait(
          what
              + "; the StatefulSet, which says whether this ordinal is wanted, was not read: "
              + unread.reason());
    }
    if (!(facts.target() instanceof ScaleTarget.Replicas target)) {
      return new JoinPlan.Fail(
          what
              + "; without a StatefulSet to say this member is wanted again, a person decides:"
              + " move the data dir's member/ directory aside and join again as a new learner");
    }
    OptionalInt ordinal = ScaleDownRule.ordinal(target.statefulSet(), facts.name());
    if (ordinal.isEmpty()) {
      return new JoinPlan.Fail(
          what + "; " + facts.name() + " is not a Pod of StatefulSet " + target.statefulSet());
    }
    if (!target.wants(ordinal.getAsInt())) {
      return new JoinPlan.Fail(
          what
              + "; its ordinal "
              + ordinal.getAsInt()
              + " is still surplus (ordinals "
              + target.range()
              + "): it stays out");
    }
    return new JoinPlan.SetAsideRemovedData(removedId);
  }

  /**
   * Whether the data dir holds a member this list omits: the one answer that may set data aside, so
   * {@code join} confirms it with a linearizable read before deciding.
   */
  public static boolean listOmitsDataDirMember(DataDirMember dataDir, Membership membership) {
    return dataDir instanceof DataDirMember.Identified held
        && membership instanceof Membership.Known known
        && known.byId(held.memberId()).isEmpty();
  }

  public static JoinPlan decide(JoinFacts facts) {
    if (listOmitsDataDirMember(facts.dataDir(), facts.membership())
        && facts.dataDir() instanceof DataDirMember.Identified held
        && facts.membership() instanceof Membership.Known known) {
      if (known.clusterId() != 0
          && held.clusterId() != 0
          && known.clusterId() != held.clusterId()) {
        return new JoinPlan.Fail(
            "the data dir belongs to cluster "
                + Long.toHexString(held.clusterId())
                + ", the cluster endpoints answer for cluster "
                + Long.toHexString(known.clusterId())
                + ": check --cluster-endpoints and the volume");
      }
      return removedMember(facts, held.memberId());
    }
    Optional<String> schemeChange = peerSchemeChange(facts);
    if (schemeChange.isPresent()) {
      return new JoinPlan.Fail(schemeChange.get());
    }
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
