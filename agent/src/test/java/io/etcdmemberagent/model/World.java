package io.etcdmemberagent.model;

import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.membership.ScaleDownDecision;
import io.etcdmemberagent.core.membership.ScaleDownFacts;
import io.etcdmemberagent.core.membership.ScaleDownRule;
import io.etcdmemberagent.core.membership.ScaleDownTrigger;
import io.etcdmemberagent.core.membership.ScaleTarget;
import io.etcdmemberagent.core.membership.SurplusPod;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One state of the world the scale-down rule acts in: a StatefulSet named {@code db} with Pods
 * {@code db-0 .. db-8}, each Pod's etcd and agent, etcd's membership, leader and quorum, and the
 * baseline the agent is measured against (the members at the start, each etcd stopping at SIGTERM,
 * no member changes). Immutable; {@link #key()} identifies it for deduplication.
 *
 * <p>Kubernetes as read in the kubelet and the StatefulSet controller (DESIGN.md §4): a deleted
 * Pod's containers are signalled together, etcd's preStop (the hold) runs first, and etcd gets
 * SIGTERM only when the hold answers (its agent settled, its agent died, or its budget ended); the
 * Pod is gone once its etcd has stopped. Parallel deletes every surplus Pod in one sync and creates
 * every missing one; OrderedReady deletes the highest surplus Pod only while no Pod terminates and
 * every wanted Pod is Ready, and creates the lowest missing one once the lower ones are Ready.
 *
 * <p>etcd: a change commits only with a leader, and a leader exists only while a quorum of the
 * voters runs; a removed member's etcd stops itself; a learner joins only while no other learner
 * exists and is promoted by its own agent; etcd refuses a voter removal that leaves fewer running
 * voters than a quorum of the rest.
 */
final class World {

  static final int MAX = 9;
  static final String STS = "db";

  static final int ABSENT = 0;
  static final int RUNNING = 1;
  static final int TERMINATING = 2;

  static final int NONE = 0;
  static final int LEARNER = 1;
  static final int VOTER = 2;

  enum Policy {
    PARALLEL,
    ORDERED_READY
  }

  /** The one fault a run may inject, at any moment the exploration chooses. */
  enum Fault {
    NONE,
    /** A staying member's etcd is down from the start and stays down. */
    STAYING_MEMBER_DOWN,
    /** One terminating agent is killed with -9: its hold fails, etcd stops at once. */
    AGENT_KILLED,
    /** The API server cannot be read for a while (shorter than the budget), then can again. */
    API_UNREADABLE,
    /** A second {@code kubectl scale} to any size 0..9, mid-way. */
    SECOND_SCALE
  }

  // per ordinal
  final byte[] pod;
  final byte[] member;
  final boolean[] etcdUp;
  final boolean[] agentDead;
  final boolean[] released; // the hold answered: etcd gets SIGTERM
  final boolean[] faultDown;
  // global
  final int replicas;
  final int leader; // ordinal, -1 when none
  final boolean apiDown;
  final boolean faultUsed;
  final int baselineVoters; // bit mask: the voters at the start
  final Fault fault;
  final Policy policy;

  /**
   * Whether etcd's preStop holds it until its agent settles; without it (the chart before this
   * hold), etcd gets SIGTERM together with its agent and may stop before the agent acts.
   */
  final boolean hold;

  private World(
      byte[] pod,
      byte[] member,
      boolean[] etcdUp,
      boolean[] agentDead,
      boolean[] released,
      boolean[] faultDown,
      int replicas,
      int leader,
      boolean apiDown,
      boolean faultUsed,
      int baselineVoters,
      Fault fault,
      Policy policy,
      boolean hold) {
    this.hold = hold;
    this.pod = pod;
    this.member = member;
    this.etcdUp = etcdUp;
    this.agentDead = agentDead;
    this.released = released;
    this.faultDown = faultDown;
    this.replicas = replicas;
    this.leader = leader;
    this.apiDown = apiDown;
    this.faultUsed = faultUsed;
    this.baselineVoters = baselineVoters;
    this.fault = fault;
    this.policy = policy;
  }

  /**
   * {@code n} running voters (but {@code learner}, when not -1), {@code leader} leading, then the
   * user scales to {@code m}. With {@link Fault#STAYING_MEMBER_DOWN} the member {@code down} is
   * down from the start.
   */
  static World start(int n, int m, int leader, int learner, Policy policy, Fault fault, int down) {
    return start(n, m, leader, learner, policy, fault, down, true);
  }

  static World start(
      int n, int m, int leader, int learner, Policy policy, Fault fault, int down, boolean hold) {
    byte[] pod = new byte[MAX];
    byte[] member = new byte[MAX];
    boolean[] up = new boolean[MAX];
    boolean[] faultDown = new boolean[MAX];
    int baseline = 0;
    for (int i = 0; i < n; i++) {
      pod[i] = RUNNING;
      member[i] = (byte) (i == learner ? LEARNER : VOTER);
      up[i] = true;
      if (i != learner) {
        baseline |= 1 << i;
      }
    }
    if (fault == Fault.STAYING_MEMBER_DOWN) {
      up[down] = false;
      faultDown[down] = true;
    }
    return new World(
            pod,
            member,
            up,
            new boolean[MAX],
            new boolean[MAX],
            faultDown,
            m,
            leader,
            false,
            fault == Fault.STAYING_MEMBER_DOWN,
            baseline,
            fault,
            policy,
            hold)
        .normalized();
  }

  private Builder edit() {
    return new Builder(this);
  }

  String key() {
    byte[] k = new byte[MAX * 4 + 6];
    for (int i = 0; i < MAX; i++) {
      k[i * 4] = (byte) (pod[i] | member[i] << 2);
      k[i * 4 + 1] =
          (byte)
              ((etcdUp[i] ? 1 : 0)
                  | (agentDead[i] ? 2 : 0)
                  | (released[i] ? 4 : 0)
                  | (faultDown[i] ? 8 : 0));
    }
    int g = MAX * 4;
    k[g] = (byte) replicas;
    k[g + 1] = (byte) leader;
    k[g + 2] = (byte) ((apiDown ? 1 : 0) | (faultUsed ? 2 : 0));
    k[g + 3] = (byte) baselineVoters;
    k[g + 4] = (byte) (baselineVoters >> 8);
    k[g + 5] = (byte) (fault.ordinal() | policy.ordinal() << 4 | (hold ? 0x40 : 0));
    return new String(k, java.nio.charset.StandardCharsets.ISO_8859_1);
  }

  // ---- derived facts ----

  boolean wanted(int i) {
    return i < replicas;
  }

  boolean voter(int i) {
    return member[i] == VOTER;
  }

  int voters() {
    int c = 0;
    for (int i = 0; i < MAX; i++) {
      c += voter(i) ? 1 : 0;
    }
    return c;
  }

  int votersMask() {
    int mask = 0;
    for (int i = 0; i < MAX; i++) {
      mask |= voter(i) ? 1 << i : 0;
    }
    return mask;
  }

  int aliveVoters() {
    int c = 0;
    for (int i = 0; i < MAX; i++) {
      c += voter(i) && etcdUp[i] ? 1 : 0;
    }
    return c;
  }

  static int quorum(int voters) {
    return voters / 2 + 1;
  }

  /**
   * The member failures the cluster tolerates: running voters beyond a quorum, -1 without a quorum
   * (or without a member at all).
   */
  static int tolerance(int voters, int alive) {
    return voters == 0 || alive < quorum(voters) ? -1 : alive - quorum(voters);
  }

  int tolerance() {
    return tolerance(voters(), aliveVoters());
  }

  /**
   * The same StatefulSet without the agent: the voters at the start of the step (the user's last
   * scale), each running only while its Pod runs (a terminating or gone Pod's etcd stopped at
   * SIGTERM) and its etcd was not down, no member added or removed since.
   */
  int baselineTolerance() {
    int voters = Integer.bitCount(baselineVoters);
    int alive = 0;
    for (int i = 0; i < MAX; i++) {
      if ((baselineVoters & 1 << i) != 0 && pod[i] == RUNNING && !faultDown[i]) {
        alive++;
      }
    }
    return tolerance(voters, alive);
  }

  /** The step is done: every wanted Pod a ready voter, no other Pod and no other member. */
  boolean settled() {
    for (int i = 0; i < MAX; i++) {
      if (wanted(i) ? !ready(i) : pod[i] != ABSENT || member[i] != NONE) {
        return false;
      }
    }
    return true;
  }

  boolean ready(int i) {
    return pod[i] == RUNNING && etcdUp[i] && voter(i) && leader >= 0;
  }

  /**
   * A member's id: its ordinal's. A member that joins again gets a new id from etcd, but no two
   * lives of one ordinal are ever members at once, and the rule treats ids alike: states that
   * differ only in that are one.
   */
  long id(int i) {
    return i + 1;
  }

  static int ordinalOf(long id) {
    return (int) (id - 1);
  }

  MemberInfo info(int i) {
    String pod = STS + "-" + i;
    return new MemberInfo(
        id(i),
        pod,
        List.of("http://" + pod + ".peer:2380"),
        List.of("http://" + pod + ".peer:2379"),
        member[i] == LEARNER);
  }

  /** What a round of the agent of {@code self} reads, as {@code ScaleDownRound} reads it. */
  ScaleDownDecision decide(int self, boolean catchUp) {
    if (apiDown) {
      return ScaleDownRule.decide(
          new ScaleDownFacts(
              new ScaleTarget.Unread("503"),
              new Membership.Known(List.of(), ""),
              0,
              Set.of(),
              catchUp
                  ? new ScaleDownTrigger.CatchUp(id(self))
                  : new ScaleDownTrigger.OwnPodTerminating(id(self))));
    }
    if (leader < 0 && replicas > 0) {
      // the linearizable member list needs a quorum
      return new ScaleDownDecision.Idle("MembersUnknown", "no voter answered MemberList");
    }
    List<MemberInfo> members = new ArrayList<>();
    Set<Long> healthy = new HashSet<>();
    Map<String, SurplusPod> pods = new HashMap<>();
    for (int i = 0; i < MAX; i++) {
      if (member[i] == NONE) {
        continue;
      }
      members.add(info(i));
      if (voter(i) && etcdUp[i] && leader >= 0) {
        healthy.add(id(i));
      }
      pods.put(
          STS + "-" + i,
          switch (pod[i]) {
            case RUNNING -> SurplusPod.RUNNING;
            case TERMINATING -> SurplusPod.TERMINATING;
            default -> SurplusPod.GONE;
          });
    }
    return ScaleDownRule.decide(
        new ScaleDownFacts(
            new ScaleTarget.Replicas(STS, replicas),
            new Membership.Known(members, ""),
            leader >= 0 ? id(leader) : 0,
            healthy,
            pods,
            catchUp
                ? new ScaleDownTrigger.CatchUp(id(self))
                : new ScaleDownTrigger.OwnPodTerminating(id(self))));
  }

  private static final Set<String> SETTLED =
      Set.of("NoSurplusMember", "NotSurplus", "Paused", "NoStatefulSet", "AlreadyRemoved");

  /** A step of the world: what happened, and the world after it. */
  record Step(String label, World after) {}

  /** Every step the world can take from here; empty when nothing can happen any more. */
  List<Step> steps(Invariants check) {
    List<Step> out = new ArrayList<>();
    List<Step> budgetsEnd = new ArrayList<>();
    elections(out);
    controller(out);
    for (int i = 0; i < MAX; i++) {
      joinAndPromote(i, out);
      if (pod[i] == TERMINATING) {
        terminating(i, out, budgetsEnd, check);
      }
    }
    if (leader >= 0 && pod[leader] == RUNNING && !apiDown) {
      act("catch-up by db-" + leader, leader, decide(leader, true), out, check);
    }
    if (out.isEmpty() && !apiDown) {
      out.addAll(budgetsEnd); // only once nothing else can happen: the budget outlasts the rest
    }
    faults(out);
    return out;
  }

  private void elections(List<Step> out) {
    if (leader >= 0 || aliveVoters() < quorum(voters()) || voters() == 0) {
      return;
    }
    int lowestStaying = -1;
    int highestStaying = -1;
    for (int i = 0; i < MAX; i++) {
      if (voter(i) && etcdUp[i] && wanted(i) && pod[i] == RUNNING) {
        lowestStaying = lowestStaying < 0 ? i : lowestStaying;
        highestStaying = i;
      }
    }
    for (int i = 0; i < MAX; i++) {
      // staying running voters are alike to the rule but for their order: the lowest and the
      // highest stand for them all; every other voter is a case of its own
      boolean staying = wanted(i) && pod[i] == RUNNING;
      if (voter(i) && etcdUp[i] && (!staying || i == lowestStaying || i == highestStaying)) {
        Builder b = edit();
        b.leader = i;
        out.add(new Step("db-" + i + " elected", b.build()));
      }
    }
  }

  private void controller(List<Step> out) {
    boolean anyTerminating = false;
    boolean wantedReady = true;
    for (int i = 0; i < MAX; i++) {
      anyTerminating |= pod[i] == TERMINATING;
      if (wanted(i) && !ready(i)) {
        wantedReady = false;
      }
    }
    if (policy == Policy.PARALLEL) {
      Builder b = edit();
      boolean deleted = false;
      boolean created = false;
      for (int i = 0; i < MAX; i++) {
        if (!wanted(i) && pod[i] == RUNNING) {
          b.pod[i] = TERMINATING;
          deleted = true;
        }
      }
      if (deleted) {
        out.add(new Step("controller deletes the surplus Pods", b.build()));
      }
      b = edit();
      for (int i = 0; i < MAX; i++) {
        if (wanted(i) && pod[i] == ABSENT) {
          b.create(i);
          created = true;
        }
      }
      if (created) {
        out.add(new Step("controller creates the missing Pods", b.build()));
      }
      return;
    }
    int highest = -1;
    for (int i = 0; i < MAX; i++) {
      if (!wanted(i) && pod[i] == RUNNING) {
        highest = i;
      }
    }
    if (highest >= 0 && !anyTerminating && wantedReady) {
      Builder b = edit();
      b.pod[highest] = TERMINATING;
      out.add(new Step("controller deletes db-" + highest, b.build()));
    }
    for (int i = 0; i < MAX && wanted(i); i++) {
      if (pod[i] == ABSENT) {
        Builder b = edit();
        b.create(i);
        out.add(new Step("controller creates db-" + i, b.build()));
        break;
      }
      if (!ready(i)) {
        break;
      }
    }
  }

  private void joinAndPromote(int i, List<Step> out) {
    if (pod[i] != RUNNING || faultDown[i] || leader < 0) {
      return;
    }
    if (member[i] == NONE && !etcdUp[i]) {
      for (int j = 0; j < MAX; j++) {
        if (member[j] == LEARNER) {
          return; // one learner at a time (max-learners 1); join waits
        }
        if (j < i && pod[j] == RUNNING && member[j] == NONE && !etcdUp[j] && !faultDown[j]) {
          return; // joining Pods are alike to the rule: the lowest joins first stands for any order
        }
      }
      Builder b = edit();
      b.member[i] = LEARNER;
      b.etcdUp[i] = true;
      out.add(new Step("db-" + i + " joins as a learner", b.build()));
    } else if (member[i] == LEARNER && etcdUp[i] && (wanted(i) || apiDown)) {
      // the agent asks the StatefulSet before it promotes: a leaving member is not promoted (an
      // unread answer does not stop it)
      Builder b = edit();
      b.member[i] = VOTER;
      out.add(new Step("db-" + i + " promoted", b.build()));
    }
  }

  private void terminating(int i, List<Step> out, List<Step> budgetsEnd, Invariants check) {
    boolean holding = !agentDead[i] && !released[i];
    if (holding && !hold && etcdUp[i]) {
      Builder b = edit();
      b.etcdUp[i] = false;
      out.add(new Step("db-" + i + "'s etcd stops at SIGTERM, unheld", b.build()));
    }
    if (holding) {
      ScaleDownDecision d = decide(i, false);
      if (d instanceof ScaleDownDecision.Idle idle && SETTLED.contains(idle.reason())) {
        Builder b = edit();
        b.released[i] = true;
        out.add(new Step("db-" + i + " settled: " + idle.reason(), b.build()));
      } else {
        act("db-" + i + "'s fast path", i, d, out, check);
      }
      if (d instanceof ScaleDownDecision.Blocked || d instanceof ScaleDownDecision.Idle) {
        Builder b = edit();
        b.released[i] = true;
        budgetsEnd.add(new Step("db-" + i + "'s budget ends: " + SurplusText.of(d), b.build()));
      }
      if (fault == Fault.AGENT_KILLED && !faultUsed) {
        Builder b = edit();
        b.agentDead[i] = true;
        b.faultUsed = true;
        out.add(new Step("db-" + i + "'s agent killed", b.build()));
      }
    } else {
      // etcd stops at SIGTERM, and then the Pod is gone
      Builder b = edit();
      b.etcdUp[i] = false;
      b.pod[i] = ABSENT;
      b.agentDead[i] = false;
      b.released[i] = false;
      out.add(new Step("db-" + i + "'s etcd stops, its Pod is gone", b.build()));
    }
  }

  private void act(String who, int agent, ScaleDownDecision d, List<Step> out, Invariants check) {
    if (d instanceof ScaleDownDecision.Remove remove) {
      int x = ordinalOf(remove.member().id());
      check.removal(this, x, who);
      if (leader < 0 || member[x] == NONE) {
        return;
      }
      if (member[x] == VOTER) {
        int aliveAfter = aliveVoters() - (etcdUp[x] ? 1 : 0);
        if (aliveAfter < quorum(voters() - 1)) {
          return; // etcd's strict reconfiguration check refuses
        }
      }
      Builder b = edit();
      b.member[x] = NONE;
      b.etcdUp[x] = false; // a removed member's etcd stops itself
      if (x == agent && pod[agent] == TERMINATING) {
        // settled: the hold answers, and the Pod's etcd has stopped (removed), so it is as good as
        // gone: nothing else looks at a Pod whose member is gone and whose etcd is down
        b.pod[agent] = ABSENT;
      }
      out.add(new Step(who + " removes db-" + x, b.build()));
    } else if (d instanceof ScaleDownDecision.MoveLeader move) {
      int to = ordinalOf(move.toId());
      if (leader == ordinalOf(move.leader().id()) && voter(to) && etcdUp[to]) {
        Builder b = edit();
        b.leader = to;
        out.add(new Step(who + " moves leadership to db-" + to, b.build()));
      }
    }
  }

  private void faults(List<Step> out) {
    if (faultUsed && !apiDown) {
      return;
    }
    if (fault == Fault.API_UNREADABLE) {
      Builder b = edit();
      b.apiDown = !apiDown;
      b.faultUsed = true;
      out.add(
          new Step(apiDown ? "the API server answers again" : "the API server fails", b.build()));
    } else if (fault == Fault.SECOND_SCALE && !faultUsed && !settled()) {
      // mid-way only: after the step settles, a scale is a first step of its own, explored as such
      for (int m = 0; m <= MAX; m++) {
        if (m != replicas) {
          Builder b = edit();
          b.replicas = m;
          b.faultUsed = true;
          b.baselineVoters = votersMask(); // a new step: measured from where the last one stands
          out.add(new Step("scaled again to " + m, b.build()));
        }
      }
    }
  }

  /** The leader steps down without a running quorum; a stopped or removed leader leads no more. */
  private World normalized() {
    if (leader >= 0 && (!voter(leader) || !etcdUp[leader] || aliveVoters() < quorum(voters()))) {
      Builder b = edit();
      b.leader = -1;
      return b.freeze();
    }
    return this;
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("replicas " + replicas + ", leader db-" + leader + ":");
    for (int i = 0; i < MAX; i++) {
      if (pod[i] == ABSENT && member[i] == NONE) {
        continue;
      }
      s.append(" db-").append(i).append('[');
      s.append(new String[] {"gone", "running", "terminating"}[pod[i]]);
      s.append(',').append(new String[] {"-", "learner", "voter"}[member[i]]);
      s.append(etcdUp[i] ? ",up" : ",down");
      s.append(agentDead[i] ? ",agent killed" : released[i] ? ",released" : "");
      s.append(']');
    }
    return s + (apiDown ? " (API down)" : "");
  }

  private static final class Builder {
    final byte[] pod;
    final byte[] member;
    final boolean[] etcdUp;
    final boolean[] agentDead;
    final boolean[] released;
    final boolean[] faultDown;
    int replicas;
    int leader;
    boolean apiDown;
    boolean faultUsed;
    int baselineVoters;
    final World from;

    Builder(World w) {
      from = w;
      pod = w.pod.clone();
      member = w.member.clone();
      etcdUp = w.etcdUp.clone();
      agentDead = w.agentDead.clone();
      released = w.released.clone();
      faultDown = w.faultDown.clone();
      replicas = w.replicas;
      leader = w.leader;
      apiDown = w.apiDown;
      faultUsed = w.faultUsed;
      baselineVoters = w.baselineVoters;
    }

    /** A new Pod: etcd restarts from the data of a member still listed, or join adds one. */
    void create(int i) {
      pod[i] = RUNNING;
      agentDead[i] = false;
      released[i] = false;
      etcdUp[i] = member[i] != NONE && !faultDown[i];
    }

    World freeze() {
      return new World(
          pod,
          member,
          etcdUp,
          agentDead,
          released,
          faultDown,
          replicas,
          leader,
          apiDown,
          faultUsed,
          baselineVoters,
          from.fault,
          from.policy,
          from.hold);
    }

    World build() {
      return freeze().normalized();
    }
  }

  boolean sameMembers(World other) {
    return Arrays.equals(member, other.member);
  }
}
