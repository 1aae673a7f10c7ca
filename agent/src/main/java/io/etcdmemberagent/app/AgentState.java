package io.etcdmemberagent.app;

import io.etcdmemberagent.app.poll.PollLoop;
import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.core.readiness.Freshness;
import io.etcdmemberagent.http.AgentView;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/** What HTTP serves: the loop's latest outcome, plus start-up, shutdown and staleness. */
final class AgentState implements AgentView {

  private static final String SHUTDOWN = "shutdown";

  private final PollLoop loop;
  private final Clock clock;
  private final Duration maxVerdictAge;
  private final Supplier<Map<String, Object>> extras;
  private volatile boolean shuttingDown;

  AgentState(
      PollLoop loop, Clock clock, Duration maxVerdictAge, Supplier<Map<String, Object>> extras) {
    this.loop = loop;
    this.clock = clock;
    this.maxVerdictAge = maxVerdictAge;
    this.extras = extras;
  }

  void beginShutdown() {
    shuttingDown = true;
  }

  @Override
  public List<Check> readinessChecks() {
    List<Check> checks = new ArrayList<>();
    Optional<PollOutcome> latest = loop.latest();
    if (latest.isEmpty()) {
      checks.addAll(starting());
    } else {
      checks.addAll(latest.get().verdict().checks());
      loop.silentInThisPoll().ifPresent(failing -> failEarly(checks, failing));
      checks.add(
          Freshness.check(latest.get().verdict().decidedAt(), clock.instant(), maxVerdictAge));
    }
    if (shuttingDown) {
      checks.add(Check.fail(SHUTDOWN, "ShuttingDown", "the agent is shutting down"));
    }
    return checks;
  }

  /** Every check failing as "Starting": no poll has finished yet. */
  static List<Check> starting() {
    List<Check> checks = new ArrayList<>();
    for (String name : CheckNames.ALL) {
      checks.add(Check.fail(name, "Starting", "no poll has finished yet"));
    }
    return checks;
  }

  /**
   * The poll in progress found the local member silent: its {@code serving} check fails now, not
   * when the poll's remaining calls (each up to the etcd timeout) are done. Only ever turns a
   * passing check into a failing one.
   */
  private static void failEarly(List<Check> checks, Check failing) {
    for (int i = 0; i < checks.size(); i++) {
      if (checks.get(i).name().equals(failing.name()) && checks.get(i).passed()) {
        checks.set(i, failing);
      }
    }
  }

  @Override
  public Optional<PollOutcome> latest() {
    return loop.latest();
  }

  @Override
  public Optional<String> livenessProblem() {
    Duration since = Duration.between(loop.lastProgress(), clock.instant());
    if (since.compareTo(maxVerdictAge.multipliedBy(2)) > 0) {
      return Optional.of("no poll finished for " + since.toMillis() + "ms");
    }
    return Optional.empty();
  }

  @Override
  public Map<String, Object> statusExtras() {
    return extras.get();
  }
}
