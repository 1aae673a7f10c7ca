package io.etcdmemberagent.fault;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What happened during a fault test, on one monotonic clock (nanoseconds): the agent's {@code
 * /readyz} answers, the {@code ready} condition the API stand-in held, the ground truth read from
 * etcd by the test itself, and the test's marks (a fault begins, a fault ends, a window in which
 * nothing may change). Thread-safe; read it with {@link #snapshot()}.
 */
final class History {

  /**
   * One {@code /readyz} answer (-1: nothing answered), asked at {@code atNanos}, and the stand-in's
   * ready condition, read at {@code conditionAtNanos} (right after the answer; later when the
   * recorder's thread was held up).
   */
  record Verdict(long atNanos, int readyz, String readyCondition, long conditionAtNanos) {
    Verdict(long atNanos, int readyz, String readyCondition) {
      this(atNanos, readyz, readyCondition, atNanos);
    }

    boolean ready() {
      return readyz == 200;
    }
  }

  /**
   * The truth about the local member as the test read it: it answered Status, it is a voter by the
   * member list of the other members and by its own Status, it knows a leader, it has a CORRUPT
   * alarm. Sampled from {@code atNanos} to {@code doneNanos}: a slow answer holds up the next
   * sample.
   */
  record Truth(
      long atNanos,
      boolean answered,
      boolean voter,
      boolean leaderKnown,
      boolean corrupt,
      long doneNanos) {
    Truth(long atNanos, boolean answered, boolean voter, boolean leaderKnown, boolean corrupt) {
      this(atNanos, answered, voter, leaderKnown, corrupt, atNanos);
    }

    boolean healthyVoter() {
      return answered && voter && leaderKnown && !corrupt;
    }
  }

  /** A mark: {@code kind} is what the invariants look for, {@code label} what a human reads. */
  record Mark(long atNanos, Kind kind, String label) {}

  enum Kind {
    FAULT_BEGINS,
    FAULT_ENDS,
    STEADY_BEGINS,
    STEADY_ENDS
  }

  /** Everything recorded, copied. */
  record Snapshot(List<Verdict> verdicts, List<Truth> truths, List<Mark> marks) {

    List<Mark> marks(Kind kind) {
      return marks.stream().filter(m -> m.kind() == kind).toList();
    }

    Optional<Verdict> firstVerdictAfter(long atNanos, java.util.function.Predicate<Verdict> p) {
      return verdicts.stream().filter(v -> v.atNanos() >= atNanos).filter(p).findFirst();
    }
  }

  private final List<Verdict> verdicts = new ArrayList<>();
  private final List<Truth> truths = new ArrayList<>();
  private final List<Mark> marks = new ArrayList<>();

  synchronized void add(Verdict v) {
    verdicts.add(v);
  }

  synchronized void add(Truth t) {
    truths.add(t);
  }

  synchronized void mark(Kind kind, String label) {
    marks.add(new Mark(System.nanoTime(), kind, label));
  }

  synchronized Snapshot snapshot() {
    return new Snapshot(List.copyOf(verdicts), List.copyOf(truths), List.copyOf(marks));
  }
}
