package io.etcdmemberagent.app.poll;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.promotion.PromotionAttempt;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.readiness.Verdict;
import io.etcdmemberagent.support.EventLog;
import java.util.HashMap;
import java.util.Map;

/** Logs what changed between polls (state, readiness, each check), never a line per poll. */
public final class TransitionLog {

  private Verdict previous;
  private boolean wasStalled;
  private String lastDecision = "";
  private final Map<String, String> lastCheckOutcome = new HashMap<>();

  public void observe(PollOutcome outcome) {
    Verdict verdict = outcome.verdict();
    EventLog.debug(
        "poll",
        "seq",
        outcome.sequence(),
        "tookMs",
        outcome.took().toMillis(),
        "state",
        verdict.state().reason(),
        "ready",
        verdict.ready());
    if (previous == null || previous.state() != verdict.state()) {
      EventLog.info(
          "member-state",
          "from",
          previous == null ? "none" : previous.state().reason(),
          "to",
          verdict.state().reason(),
          "memberId",
          Long.toHexString(verdict.memberId()),
          "detail",
          verdict.stateDetail());
    }
    if (previous == null || previous.ready() != verdict.ready()) {
      EventLog.info("readiness", "ready", verdict.ready(), "failing", failing(verdict));
    }
    for (Check c : verdict.checks()) {
      String key = (c.passed() ? "ok:" : "failed:") + c.reason();
      String before = lastCheckOutcome.put(c.name(), key);
      if (before != null && !before.equals(key)) {
        EventLog.info(
            "check",
            "seq",
            outcome.sequence(),
            "name",
            c.name(),
            "passed",
            c.passed(),
            "reason",
            c.reason(),
            "message",
            c.message());
      }
    }
    String decision = describe(outcome.promotion());
    if (!decision.equals(lastDecision)) {
      EventLog.info("promotion-decision", "seq", outcome.sequence(), "decision", decision);
      lastDecision = decision;
    }
    boolean stalled = outcome.progress().stalled();
    if (stalled != wasStalled) {
      EventLog.warn(
          stalled ? "learner-stalled" : "learner-progressing",
          "sinceProgressS",
          outcome.progress().sinceProgress().toSeconds());
      wasStalled = stalled;
    }
    previous = verdict;
  }

  public void promotion(PromotionAttempt attempt, long seq) {
    Object[] fields = {
      "seq", seq,
      "result", attempt.result().label(),
      "memberId", Long.toHexString(attempt.memberId()),
      "lag", attempt.lag(),
      "tookMs", attempt.took().toMillis(),
      "detail", attempt.detail()
    };
    if (attempt.result().success()) {
      EventLog.info("promoted", fields);
    } else {
      EventLog.warn("promotion-failed", fields);
    }
  }

  /** The decision's kind and reason, without numbers that change every poll. */
  private static String describe(PromotionDecision d) {
    if (d instanceof PromotionDecision.Hold hold) {
      return "Hold/" + hold.reason();
    }
    if (d instanceof PromotionDecision.BackingOff b) {
      return "BackingOff/" + b.lastResult();
    }
    return d.getClass().getSimpleName();
  }

  private static String failing(Verdict verdict) {
    return String.join(
        ",", verdict.checks().stream().filter(c -> !c.passed()).map(Check::name).toList());
  }
}
