package io.etcdmemberagent.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcdmemberagent.model.World.Fault;
import io.etcdmemberagent.model.World.Policy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every scale step n → m for n, m in 1..9 (what the chart's schema allows), explored exhaustively
 * against the real {@code ScaleDownRule}: both Pod management policies, the leader at each ordinal,
 * a learner at each other ordinal, and one fault at a time at any moment (a staying member down, a
 * terminating agent killed with -9, the API server unreadable for a while, a second scale to any
 * size 0..9). States are deduplicated across runs; every interleaving of the agents' rounds, the
 * controller, elections and the faults is taken.
 *
 * <p>Safety, after every step: the cluster tolerates at least as many member failures as the same
 * StatefulSet without the agent (each etcd stopping at SIGTERM, no member changes); no leader that
 * is not a running voter; every removal is of a surplus member whose Pod does not run, never the
 * last voter, never the leader.
 *
 * <p>Liveness, at every state where nothing can happen any more: the cluster has converged to
 * {@code replicas} running voters and no other member, unless it has no quorum (which the baseline
 * lost too, by the safety check) or a staying member is down, and then every surplus member left
 * would lose quorum if removed. Fairness assumed: every enabled step eventually happens; a surplus
 * agent's budget ends only once nothing else can happen (no election, join, promotion, controller
 * step or other agent's act is left, and the API server answers): the budget outlasts the rest of
 * the step, which the chart's render check and the node's measured 9 → 1 stand for; the graph is
 * checked to have no cycle, so every run ends.
 */
class ScaleModelTest {

  /** {@code -Dmodel.full=true}: learners and faults together, not one or the other. */
  static final boolean FULL = Boolean.getBoolean("model.full");

  static final int MAX_N = Integer.getInteger("model.maxN", World.MAX);

  final Invariants invariants = new Invariants();
  final Map<String, Byte> color = new HashMap<>(1 << 20);
  final Map<Fault, Integer> starts = new EnumMap<>(Fault.class);
  int terminal;
  int terminalWithoutQuorum;
  int terminalStuckOnDownMember;
  long steps;

  @Test
  void everyScaleStepKeepsWhatTheClusterToleratesAndConverges() {
    long began = System.nanoTime();
    for (Policy policy : Policy.values()) {
      for (int n = 1; n <= MAX_N; n++) {
        for (int m = 1; m <= MAX_N; m++) {
          for (int leader = 0; leader < n; leader++) {
            for (World start : starts(n, m, leader, policy)) {
              explore(start);
            }
          }
        }
      }
    }
    System.out.printf(
        "[scale-model] %d initial states (%s), %d states explored %s, %d steps, %d terminal (%d"
            + " without quorum as without the agent, %d with surplus members kept by a down staying"
            + " member), %.1f s%n",
        starts.values().stream().mapToInt(Integer::intValue).sum(),
        starts,
        color.size(),
        statesByFault,
        steps,
        terminal,
        terminalWithoutQuorum,
        terminalStuckOnDownMember,
        (System.nanoTime() - began) / 1e9);
    assertThat(terminal).isPositive();
  }

  /**
   * The model sees the defect a user met: without etcd's hold, 5 → 2 loses quorum for good, because
   * the surplus etcds may stop before their agents remove a member.
   */
  @Test
  void withoutTheHoldFiveToTwoLosesQuorum() {
    assertThatThrownBy(
            () -> explore(World.start(5, 2, 0, -1, Policy.PARALLEL, Fault.NONE, -1, false)))
        .hasMessageContaining("no quorum at the end without any fault")
        .hasMessageContaining("etcd stops at SIGTERM, unheld");
  }

  List<World> starts(int n, int m, int leader, Policy policy) {
    List<World> out = new ArrayList<>();
    List<Integer> learners = new ArrayList<>(List.of(-1));
    for (int j = 0; j < n; j++) {
      if (j != leader) {
        learners.add(j);
      }
    }
    for (int learner : learners) {
      add(out, World.start(n, m, leader, learner, policy, Fault.NONE, -1));
      if (learner >= 0 && !FULL) {
        continue;
      }
      for (int down = 0; down < Math.min(n, m); down++) {
        if (down != leader && down != learner) {
          add(out, World.start(n, m, leader, learner, policy, Fault.STAYING_MEMBER_DOWN, down));
        }
      }
      for (Fault f : List.of(Fault.AGENT_KILLED, Fault.API_UNREADABLE, Fault.SECOND_SCALE)) {
        add(out, World.start(n, m, leader, learner, policy, f, -1));
      }
    }
    return out;
  }

  final Map<Fault, Integer> statesByFault = new EnumMap<>(Fault.class);

  private void add(List<World> out, World w) {
    starts.merge(w.fault, 1, Integer::sum);
    out.add(w);
  }

  private record Frame(World world, String key, List<World.Step> next, String label) {}

  /** Depth first, every successor, each state once; a state met again on the path is a cycle. */
  void explore(World start) {
    String startKey = start.key();
    if (color.containsKey(startKey)) {
      return;
    }
    Deque<Frame> path = new ArrayDeque<>();
    Deque<Integer> index = new ArrayDeque<>();
    enter(start, startKey, "start: " + start, path, index);
    while (!path.isEmpty()) {
      Frame top = path.peek();
      int i = index.pop();
      if (i >= top.next().size()) {
        color.put(top.key(), (byte) 2);
        path.pop();
        continue;
      }
      index.push(i + 1);
      World.Step step = top.next().get(i);
      steps++;
      String key = step.after().key();
      Byte c = color.get(key);
      if (c == null) {
        enter(step.after(), key, step.label(), path, index);
      } else if (c == 1) {
        fail(path, step.label(), "a cycle: the world can go round for ever");
      }
    }
  }

  private void enter(World w, String key, String label, Deque<Frame> path, Deque<Integer> index) {
    List<World.Step> next;
    try {
      invariants.state(w);
      next = w.steps(invariants);
      if (next.isEmpty()) {
        converged(w);
      }
    } catch (AssertionError e) {
      fail(path, label, e.getMessage() + "\n  in " + w);
      return;
    }
    color.put(key, (byte) 1);
    statesByFault.merge(w.fault, 1, Integer::sum);
    path.push(new Frame(w, key, next, label));
    index.push(0);
  }

  private void converged(World w) {
    terminal++;
    if (w.leader < 0) {
      if (w.fault == Fault.NONE) {
        throw new AssertionError("no quorum at the end without any fault");
      }
      terminalWithoutQuorum++; // the baseline lost it too: the safety check says so
      return;
    }
    boolean surplusLeft = false;
    for (int i = 0; i < World.MAX; i++) {
      if (w.wanted(i)) {
        if (w.fault != Fault.STAYING_MEMBER_DOWN
            && !(w.pod[i] == World.RUNNING && w.voter(i) && w.etcdUp[i])) {
          throw new AssertionError("db-" + i + " is wanted but not a running voter at the end");
        }
      } else if (w.member[i] != World.NONE) {
        surplusLeft = true;
        if (w.pod[i] != World.RUNNING && w.replicas > 0) {
          boolean removalKeepsQuorum =
              w.member[i] == World.LEARNER
                  || (w.voters() > 1
                      && w.aliveVoters() - (w.etcdUp[i] ? 1 : 0) >= World.quorum(w.voters() - 1));
          if (removalKeepsQuorum) {
            throw new AssertionError(
                "surplus db-" + i + " is left at the end though removing it keeps quorum");
          }
        }
      }
      if (!w.wanted(i) && w.pod[i] != World.ABSENT && w.fault != Fault.STAYING_MEMBER_DOWN) {
        throw new AssertionError("db-" + i + "'s Pod is left at the end");
      }
    }
    if (surplusLeft && w.replicas > 0) {
      if (w.fault != Fault.STAYING_MEMBER_DOWN) {
        throw new AssertionError("surplus members left at the end: " + w);
      }
      terminalStuckOnDownMember++;
    }
  }

  private static void fail(Deque<Frame> path, String label, String why) {
    List<String> steps = new ArrayList<>();
    path.descendingIterator().forEachRemaining(f -> steps.add(f.label()));
    steps.add(label);
    throw new AssertionError(why + "\n  after: " + String.join("\n    -> ", steps));
  }
}
