package io.etcdmemberagent.fault;

import com.google.gson.JsonArray;
import io.etcdmemberagent.testing.AgentLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The promises of the agent, checked over a whole {@link History} (not only its end). Each method
 * returns the violations it found, one line each with the time since the first sample, so a test
 * asserts an empty list and a failure reads as a story.
 */
final class Invariants {

  /** Two truth sampling periods (100 ms each): how soon the next truth sample must follow. */
  static final Duration NEXT_TRUTH = Duration.ofMillis(200);

  /** How stale {@code /readyz} may be: poll interval + etcd timeout + the sampling period. */
  private final Duration detection;

  /** How long readiness may take to come back after a fault ends. */
  private final Duration convergence;

  /** How far the stand-in's condition may trail {@code /readyz} while the API is healthy. */
  private final Duration publication;

  Invariants(Duration detection, Duration convergence, Duration publication) {
    this.detection = detection;
    this.convergence = convergence;
    this.publication = publication;
  }

  /**
   * ready ⇒ a started voter that answered, knows a leader and has no CORRUPT alarm: every 200 from
   * {@code /readyz} has a ground-truth sample within the detection bound before it that says so.
   */
  List<String> readyOnlyForAHealthyVoter(History.Snapshot h) {
    List<String> violations = new ArrayList<>();
    if (h.truths().isEmpty()) {
      return violations;
    }
    long firstTruth = h.truths().get(0).atNanos();
    long bound = detection.toNanos();
    for (History.Verdict v : h.verdicts()) {
      if (!v.ready() || v.atNanos() - bound < firstTruth) {
        continue;
      }
      boolean backedByTruth =
          h.truths().stream()
                  .filter(t -> t.atNanos() >= v.atNanos() - bound && t.atNanos() <= v.atNanos())
                  .anyMatch(History.Truth::healthyVoter)
              || nextTruthIsHealthy(h, v.atNanos());
      if (!backedByTruth) {
        violations.add(
            at(h, v.atNanos())
                + "/readyz said 200 but for "
                + detection.toMillis()
                + " ms before the member was not a healthy voter ("
                + truthsAround(h, v.atNanos())
                + ")");
      }
    }
    return violations;
  }

  /**
   * The agent's own poll can be fresher than the recorder's last truth sample (a leader elected
   * between two samples): the first sample after the 200 settles it if it follows within {@link
   * #NEXT_TRUTH}, counted from the 200 or, when the sample before was still waiting for its answers
   * then, from the end of that sample (the recorder's own delay is not the agent's).
   */
  private static boolean nextTruthIsHealthy(History.Snapshot h, long verdictAt) {
    long from =
        Math.max(
            verdictAt,
            truthBefore(h, verdictAt).map(History.Truth::doneNanos).orElse(Long.MIN_VALUE));
    return truthAfter(h, verdictAt)
        .filter(t -> t.atNanos() - from <= NEXT_TRUTH.toNanos())
        .map(History.Truth::healthyVoter)
        .orElse(false);
  }

  private static Optional<History.Truth> truthBefore(History.Snapshot h, long at) {
    History.Truth last = null;
    for (History.Truth t : h.truths()) {
      if (t.atNanos() <= at) {
        last = t;
      }
    }
    return Optional.ofNullable(last);
  }

  private static Optional<History.Truth> truthAfter(History.Snapshot h, long at) {
    return h.truths().stream().filter(t -> t.atNanos() > at).findFirst();
  }

  /** After every fault ends, /readyz is 200 again within the convergence bound. */
  List<String> readyAgainAfterEveryFault(History.Snapshot h) {
    List<String> violations = new ArrayList<>();
    for (History.Mark end : h.marks(History.Kind.FAULT_ENDS)) {
      long deadline = end.atNanos() + convergence.toNanos();
      boolean back =
          h.verdicts().stream()
              .anyMatch(v -> v.ready() && v.atNanos() >= end.atNanos() && v.atNanos() <= deadline);
      if (!back) {
        violations.add(
            at(h, end.atNanos())
                + "not ready again within "
                + convergence.toMillis()
                + " ms after: "
                + end.label());
      }
    }
    return violations;
  }

  /**
   * How long the truth and /readyz took to be healthy again after each fault ended ("never" if they
   * were not), to report.
   */
  static List<String> convergenceTimes(History.Snapshot h) {
    List<String> times = new ArrayList<>();
    for (History.Mark end : h.marks(History.Kind.FAULT_ENDS)) {
      String took =
          h.firstVerdictAfter(end.atNanos(), History.Verdict::ready)
              .map(v -> Duration.ofNanos(v.atNanos() - end.atNanos()).toMillis() + " ms")
              .orElse("never");
      String truth =
          h.truths().stream()
              .filter(t -> t.atNanos() >= end.atNanos() && t.healthyVoter())
              .findFirst()
              .map(t -> Duration.ofNanos(t.atNanos() - end.atNanos()).toMillis() + " ms")
              .orElse("never");
      times.add(end.label() + ": a healthy voter after " + truth + ", ready after " + took);
    }
    return times;
  }

  /** Inside a steady window (e.g. short pauses below the etcd timeout) /readyz never fails. */
  List<String> noFlappingInSteadyWindows(History.Snapshot h) {
    List<String> violations = new ArrayList<>();
    for (long[] w : steadyWindows(h)) {
      h.verdicts().stream()
          .filter(v -> v.atNanos() >= w[0] && v.atNanos() <= w[1] && !v.ready())
          .findFirst()
          .ifPresent(
              v ->
                  violations.add(
                      at(h, v.atNanos()) + "/readyz said " + v.readyz() + " in a steady window"));
    }
    return violations;
  }

  /**
   * The stand-in's ready condition follows /readyz: wherever they disagree, /readyz changed less
   * than the publication bound ago. Skips the windows where the test broke the API on purpose (a
   * fault whose label starts with "api"), or stopped the agent ("agent"), and the publication bound
   * after them.
   */
  List<String> conditionFollowsReadiness(History.Snapshot h) {
    List<String> violations = new ArrayList<>();
    List<long[]> apiFaults = new ArrayList<>(faultWindows(h, "api"));
    apiFaults.addAll(faultWindows(h, "agent"));
    long bound = publication.toNanos();
    List<History.Verdict> vs = h.verdicts();
    List<Long> changes = new ArrayList<>();
    if (!vs.isEmpty()) {
      changes.add(vs.get(0).atNanos());
    }
    for (int i = 1; i < vs.size(); i++) {
      if (vs.get(i - 1).ready() != vs.get(i).ready()) {
        changes.add(vs.get(i).atNanos());
      }
    }
    long reported = Long.MIN_VALUE / 4;
    for (History.Verdict v : vs) {
      // the condition may trail /readyz, or lead it by a sample (both are read one after the other)
      // plus however long the recorder took between the two reads (a stalled test JVM)
      long readGap = v.conditionAtNanos() - v.atNanos();
      long nearest = Long.MAX_VALUE;
      for (long c : changes) {
        nearest =
            Math.min(
                nearest,
                c <= v.atNanos() ? v.atNanos() - c : Math.max(0, c - v.atNanos() - readGap) * 5);
      }
      if (v.readyCondition().isEmpty()
          || nearest < bound
          || inside(apiFaults, v.atNanos(), bound)) {
        continue;
      }
      boolean conditionReady = v.readyCondition().equals("True");
      if (conditionReady != v.ready() && v.atNanos() - reported > bound) {
        violations.add(
            at(h, v.atNanos())
                + "condition ready="
                + v.readyCondition()
                + " while /readyz said "
                + v.readyz()
                + ", "
                + Duration.ofNanos(nearest).toMillis()
                + " ms from its nearest change");
        reported = v.atNanos(); // one line per disagreement, not one per sample
      }
    }
    return violations;
  }

  /**
   * Every successful status patch changed one of our conditions (no patch in a steady state, at
   * most one per transition), and no status patch arrived inside a steady window.
   */
  List<String> noRedundantPatches(History.Snapshot h, List<Publication.StatusWrite> patches) {
    List<String> violations = new ArrayList<>();
    for (int i = 0; i < patches.size(); i++) {
      Publication.StatusWrite p = patches.get(i);
      if (withoutTimes(p.before()).equals(withoutTimes(p.after()))) {
        violations.add("status patch #" + (i + 1) + " changed nothing: " + p.after());
      }
    }
    for (long[] w : steadyWindows(h)) {
      for (Publication.StatusWrite p : patches) {
        if (p.atNanos() >= w[0] && p.atNanos() <= w[1]) {
          violations.add(at(h, p.atNanos()) + "a status patch in a steady window");
        }
      }
    }
    return violations;
  }

  /**
   * Promote calls, from the agent's log: only for {@code ownMemberId}, only with a lag within the
   * rule, one at a time (each starts after the previous one ended).
   */
  static List<String> promotesFollowTheRule(AgentLog log, long ownMemberId, long maxLag) {
    List<String> violations = new ArrayList<>();
    String own = Long.toHexString(ownMemberId);
    java.time.Instant previousEnd = null;
    for (String line : log.lines()) {
      if (!line.contains("\"event\":\"promoted\"")
          && !line.contains("\"event\":\"promotion-failed\"")) {
        continue;
      }
      String member = AgentLog.field(line, "memberId");
      if (!member.equals(own)) {
        violations.add("a promote for member " + member + ", not this member " + own + ": " + line);
      }
      long lag = Long.parseLong(AgentLog.field(line, "lag"));
      if (lag > maxLag) {
        violations.add("a promote with lag " + lag + " > " + maxLag + ": " + line);
      }
      java.time.Instant end = AgentLog.ts(line);
      java.time.Instant start = end.minusMillis(Long.parseLong(AgentLog.field(line, "tookMs")));
      // the log's clock has millisecond resolution
      if (previousEnd != null && start.plusMillis(2).isBefore(previousEnd)) {
        violations.add("a promote started before the previous one ended: " + line);
      }
      previousEnd = end;
    }
    return violations;
  }

  private static JsonArray withoutTimes(JsonArray conditions) {
    JsonArray copy = conditions.deepCopy();
    copy.forEach(
        c -> {
          c.getAsJsonObject().remove("lastTransitionTime");
          c.getAsJsonObject().remove("lastProbeTime");
        });
    return copy;
  }

  private static List<long[]> steadyWindows(History.Snapshot h) {
    List<long[]> windows = new ArrayList<>();
    List<History.Mark> begins = h.marks(History.Kind.STEADY_BEGINS);
    List<History.Mark> ends = h.marks(History.Kind.STEADY_ENDS);
    for (int i = 0; i < begins.size(); i++) {
      long end = i < ends.size() ? ends.get(i).atNanos() : Long.MAX_VALUE;
      windows.add(new long[] {begins.get(i).atNanos(), end});
    }
    return windows;
  }

  private static List<long[]> faultWindows(History.Snapshot h, String labelPrefix) {
    List<long[]> windows = new ArrayList<>();
    long begin = -1;
    for (History.Mark m : h.marks()) {
      if (!m.label().startsWith(labelPrefix)) {
        continue;
      }
      if (m.kind() == History.Kind.FAULT_BEGINS) {
        begin = m.atNanos();
      } else if (m.kind() == History.Kind.FAULT_ENDS && begin >= 0) {
        windows.add(new long[] {begin, m.atNanos()});
        begin = -1;
      }
    }
    if (begin >= 0) {
      windows.add(new long[] {begin, Long.MAX_VALUE});
    }
    return windows;
  }

  private static boolean inside(List<long[]> windows, long at, long after) {
    return windows.stream()
        .anyMatch(w -> at >= w[0] && (w[1] == Long.MAX_VALUE || at <= w[1] + after));
  }

  /**
   * The samples on either side of a 200, with how long each took, to tell a slow recorder apart.
   */
  private static String truthsAround(History.Snapshot h, long at) {
    return "last truth "
        + truthBefore(h, at).map(t -> describe(h, t)).orElse("none")
        + "; next truth "
        + truthAfter(h, at).map(t -> describe(h, t)).orElse("none");
  }

  private static String describe(History.Snapshot h, History.Truth t) {
    return at(h, t.atNanos())
        + (t.answered() ? "answered" : "silent")
        + (t.voter() ? ", voter" : ", not a voter")
        + (t.leaderKnown() ? ", leader known" : ", no leader")
        + (t.corrupt() ? ", CORRUPT" : "")
        + ", sampled in "
        + Duration.ofNanos(t.doneNanos() - t.atNanos()).toMillis()
        + " ms";
  }

  /** The history's changes (verdicts, truths, marks) in time order, one line each, for a human. */
  static List<String> changes(History.Snapshot h) {
    List<long[]> order = new ArrayList<>();
    List<String> lines = new ArrayList<>();
    String last = "";
    for (History.Verdict v : h.verdicts()) {
      String now = "readyz " + v.readyz() + ", condition " + v.readyCondition();
      if (!now.equals(last)) {
        order.add(new long[] {v.atNanos(), lines.size()});
        lines.add(at(h, v.atNanos()) + now);
        last = now;
      }
    }
    last = "";
    for (History.Truth t : h.truths()) {
      String now = "truth " + (t.healthyVoter() ? "healthy voter" : t.toString());
      now = now.replaceAll("atNanos=\\d+, |, doneNanos=\\d+", "");
      if (!now.equals(last)) {
        order.add(new long[] {t.atNanos(), lines.size()});
        lines.add(at(h, t.atNanos()) + now);
        last = now;
      }
    }
    for (History.Mark m : h.marks()) {
      order.add(new long[] {m.atNanos(), lines.size()});
      lines.add(at(h, m.atNanos()) + m.kind() + " " + m.label());
    }
    order.sort(java.util.Comparator.comparingLong(o -> o[0]));
    return order.stream().map(o -> lines.get((int) o[1])).toList();
  }

  /** The marks as "t+Nms: KIND label", on the violations' clock. */
  static List<String> marks(History.Snapshot h) {
    return h.marks().stream().map(m -> at(h, m.atNanos()) + m.kind() + " " + m.label()).toList();
  }

  private static String at(History.Snapshot h, long nanos) {
    long origin = h.verdicts().isEmpty() ? nanos : h.verdicts().get(0).atNanos();
    return "t+" + Duration.ofNanos(nanos - origin).toMillis() + "ms: ";
  }
}
