package io.etcdmemberagent.core.publish;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Remembers what the EtcdMember holds and plans the next status write: one when a fact, a condition
 * or the history changed; figures alone (lag, db size) only once the resync interval has passed
 * since they were last written. Keeps the newest {@link #MAX_TRANSITIONS} transitions. Pure.
 */
public final class MemberStatusLedger {

  /** The CRD's bound on {@code status.transitions} (DEP-04's). */
  public static final int MAX_TRANSITIONS = 100;

  private final Duration figuresInterval;
  private final ConditionLedger conditions = new ConditionLedger();
  private final List<MemberTransition> history = new ArrayList<>();
  private List<MemberTransition> writtenHistory = List.of();
  private MemberReport written;
  private Instant figuresWrittenAt = Instant.MIN;

  public MemberStatusLedger(Duration figuresInterval) {
    this.figuresInterval = figuresInterval;
  }

  /**
   * Takes what an existing object holds (an agent restart keeps the history and the conditions'
   * transition times); the next plan writes the whole status once.
   */
  public void adopt(List<MemberTransition> transitions, List<ConditionEntry> held) {
    history.clear();
    history.addAll(transitions);
    trim();
    writtenHistory = List.copyOf(history);
    conditions.adopt(held);
    written = null;
  }

  /**
   * Compares what the object holds now with what was written (a resync of the same object): a
   * condition or transition someone removed or changed is written again by the next plan.
   */
  public void reconcile(List<MemberTransition> transitions, List<ConditionEntry> held) {
    conditions.adopt(held);
    writtenHistory = List.copyOf(transitions);
  }

  /**
   * Adds new transitions; a first sighting ({@link MemberReporter#OBSERVED}, or a learner's {@link
   * MemberReporter#JOINED_AS_LEARNER}) of the role the history already ends with is no news (an
   * agent restarted) and is left out.
   */
  public void append(List<MemberTransition> transitions) {
    for (MemberTransition t : transitions) {
      boolean known =
          (t.reason().equals(MemberReporter.OBSERVED)
                  || t.reason().equals(MemberReporter.JOINED_AS_LEARNER))
              && !history.isEmpty()
              && history.get(history.size() - 1).role() == t.role();
      if (!known) {
        history.add(t);
      }
    }
    trim();
  }

  public List<MemberTransition> history() {
    return List.copyOf(history);
  }

  /** The status to write now, or empty when the object holds it (figures not yet due). */
  public Optional<MemberStatusDocument> plan(MemberReport desired, Instant now) {
    boolean conditionsChanged = conditions.plan(desired.conditions(), now, false).isPresent();
    boolean factsChanged = written == null || !written.facts().equals(desired.facts());
    boolean historyChanged = !writtenHistory.equals(history);
    boolean figuresDue =
        written == null
            || (!written.figures().equals(desired.figures())
                && !now.isBefore(figuresWrittenAt.plus(figuresInterval)));
    if (!conditionsChanged && !factsChanged && !historyChanged && !figuresDue) {
      return Optional.empty();
    }
    List<ConditionEntry> entries = conditions.plan(desired.conditions(), now, true).orElseThrow();
    return Optional.of(
        new MemberStatusDocument(desired.facts(), desired.figures(), entries, history));
  }

  /** The API server accepted this status at {@code now}. */
  public void confirm(MemberStatusDocument sent, Instant now) {
    conditions.confirm(sent.conditions());
    written =
        new MemberReport(
            sent.facts(),
            sent.figures(),
            sent.conditions().stream()
                .map(e -> new PodCondition(e.name(), e.status(), e.reason(), e.message()))
                .toList());
    writtenHistory = sent.transitions();
    figuresWrittenAt = now;
  }

  private void trim() {
    while (history.size() > MAX_TRANSITIONS) {
      history.remove(0);
    }
  }
}
