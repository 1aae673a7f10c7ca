package io.etcdmemberagent.app.membership;

import io.etcdmemberagent.core.ChangeAnswer;
import io.etcdmemberagent.core.EtcdGateway;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.membership.RemovalAttempt;
import io.etcdmemberagent.core.membership.ScaleDownDecision;
import io.etcdmemberagent.core.membership.ScaleDownFacts;
import io.etcdmemberagent.core.membership.ScaleDownRule;
import io.etcdmemberagent.core.membership.ScaleDownTrigger;
import io.etcdmemberagent.core.membership.ScaleTarget;
import io.etcdmemberagent.core.membership.StatefulSetApi;
import io.etcdmemberagent.core.membership.SurplusPod;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * One round of the scale-down rule: reads the StatefulSet's size, then (only when a member is
 * surplus) the member list (linearizable: a lagging member's view never decides), every member's
 * {@code Status} and the surplus members' Pods, decides in the core, and carries out a removal or a
 * leadership move. Every read is fresh: a removal never rests on an old poll.
 */
public final class ScaleDownRound {

  /** What one round decided, and what etcd answered when it acted. */
  public record Result(
      ScaleDownDecision decision, Optional<RemovalAttempt> attempt, int surplusVoters) {

    public Result(ScaleDownDecision decision, Optional<RemovalAttempt> attempt) {
      this(decision, attempt, 0);
    }
  }

  /** The Idle reason when no endpoint answered MemberList: undecided. */
  static final String MEMBERS_UNKNOWN = "MembersUnknown";

  private final EtcdGateway etcd;
  private final Supplier<List<String>> endpoints;
  private final StatefulSetApi statefulSet;
  private final Clock clock;

  /** {@code endpoints}: the local member's client URL first, then the cluster's. */
  public ScaleDownRound(
      EtcdGateway etcd, List<String> endpoints, StatefulSetApi statefulSet, Clock clock) {
    this(etcd, () -> endpoints, statefulSet, clock);
  }

  /**
   * {@code endpoints}, asked in order for the member list each round: the local member's client URL
   * first, then the cluster's, then the members' own URLs as the last poll knew them (a Service in
   * front of the cluster may route to a member that is frozen, and the local member stops with its
   * Pod).
   */
  public ScaleDownRound(
      EtcdGateway etcd, Supplier<List<String>> endpoints, StatefulSetApi statefulSet, Clock clock) {
    this.etcd = etcd;
    this.endpoints = endpoints;
    this.statefulSet = statefulSet;
    this.clock = clock;
  }

  /** The fast path ({@code catchUp} false) or the catch-up path, for member {@code selfId}. */
  public Result run(long selfId, boolean catchUp) {
    ScaleTarget target = statefulSet.target();
    Membership.Known members = new Membership.Known(List.of(), "");
    if (target instanceof ScaleTarget.Replicas r && r.replicas() > 0) {
      Optional<Membership.Known> read = readMembers();
      if (read.isEmpty()) {
        return new Result(
            new ScaleDownDecision.Idle(MEMBERS_UNKNOWN, "no voter answered MemberList"),
            Optional.empty());
      }
      members = read.get();
    }
    List<MemberInfo> surplus =
        target instanceof ScaleTarget.Replicas r
            ? members.members().stream().filter(m -> ScaleDownRule.isSurplus(r, m)).toList()
            : List.of();
    Set<Long> healthy = new HashSet<>();
    long leader = 0;
    long leaderTerm = -1;
    Map<String, SurplusPod> pods = new HashMap<>();
    if (!surplus.isEmpty()) {
      for (MemberInfo m : members.members()) {
        if (m.clientUrls().isEmpty()) {
          continue;
        }
        if (etcd.status(m.clientUrls().get(0)) instanceof LocalObservation.Answered a) {
          if (!a.status().learner() && a.status().leaderId() != 0) {
            healthy.add(m.id());
          }
          if (a.status().leaderId() != 0 && a.status().raftTerm() > leaderTerm) {
            leader = a.status().leaderId();
            leaderTerm = a.status().raftTerm();
          }
        }
      }
      for (MemberInfo m : surplus) {
        String pod = ScaleDownRule.podName(m);
        pods.put(pod, statefulSet.pod(pod));
      }
    }
    ScaleDownTrigger trigger =
        catchUp
            ? new ScaleDownTrigger.CatchUp(selfId)
            : new ScaleDownTrigger.OwnPodTerminating(selfId);
    ScaleDownDecision decision =
        ScaleDownRule.decide(new ScaleDownFacts(target, members, leader, healthy, pods, trigger));
    int surplusVoters = (int) surplus.stream().filter(m -> !m.learner()).count();
    return new Result(
        decision,
        act(
            decision,
            members,
            leader,
            healthy,
            catchUp ? ScaleDownRule.CATCH_UP_PATH : ScaleDownRule.FAST_PATH),
        surplusVoters);
  }

  private Optional<Membership.Known> readMembers() {
    for (String endpoint : new LinkedHashSet<>(endpoints.get())) {
      if (etcd.linearizableMemberList(endpoint) instanceof Membership.Known known) {
        return Optional.of(known);
      }
    }
    return Optional.empty();
  }

  private Optional<RemovalAttempt> act(
      ScaleDownDecision decision,
      Membership.Known members,
      long leader,
      Set<Long> healthy,
      String path) {
    if (decision instanceof ScaleDownDecision.Remove remove) {
      return Optional.of(remove(remove, members, leader, healthy));
    }
    if (decision instanceof ScaleDownDecision.MoveLeader move) {
      List<String> urls = move.leader().clientUrls();
      ChangeAnswer answer =
          urls.isEmpty()
              ? new ChangeAnswer.Error("UNAVAILABLE", "the leader has no client URL")
              : etcd.moveLeader(urls.get(0), move.toId());
      return Optional.of(
          attempt(
              "move-leader",
              move.leader(),
              path,
              answer instanceof ChangeAnswer.Accepted ? "leader-moved" : "failed",
              answer instanceof ChangeAnswer.Error e
                  ? e.code() + ": " + e.message()
                  : "leadership to " + Long.toHexString(move.toId())));
    }
    return Optional.empty();
  }

  /** Sent through the staying voters, the leader first; never through the member removed. */
  private RemovalAttempt remove(
      ScaleDownDecision.Remove remove, Membership.Known members, long leader, Set<Long> healthy) {
    Set<String> through = new LinkedHashSet<>();
    members
        .byId(leader)
        .filter(l -> l.id() != remove.member().id())
        .ifPresent(l -> through.addAll(l.clientUrls()));
    for (MemberInfo m : members.members()) {
      if (m.id() != remove.member().id() && !m.learner() && healthy.contains(m.id())) {
        through.addAll(m.clientUrls());
      }
    }
    List<String> errors = new ArrayList<>();
    for (String endpoint : through) {
      ChangeAnswer answer = etcd.removeMember(endpoint, remove.member().id());
      if (answer instanceof ChangeAnswer.Accepted) {
        return attempt(
            "remove",
            remove.member(),
            remove.path(),
            "removed",
            "through " + endpoint + " while member " + Long.toHexString(leader) + " led");
      }
      ChangeAnswer.Error error = (ChangeAnswer.Error) answer;
      if (error.code().equals("NOT_FOUND") || error.message().contains("member not found")) {
        return attempt(
            "remove", remove.member(), remove.path(), "already-removed", error.message());
      }
      errors.add(endpoint + ": " + error.code() + ": " + error.message());
      if (!error.code().equals("UNAVAILABLE") && !error.code().equals("DEADLINE_EXCEEDED")) {
        break; // etcd refused (for example its own quorum check): no other member says otherwise
      }
    }
    return attempt(
        "remove",
        remove.member(),
        remove.path(),
        "failed",
        errors.isEmpty() ? "no staying voter to send it through" : String.join("; ", errors));
  }

  private RemovalAttempt attempt(
      String action, MemberInfo member, String path, String result, String detail) {
    return new RemovalAttempt(
        clock.instant(), action, member.id(), ScaleDownRule.podName(member), path, result, detail);
  }
}
