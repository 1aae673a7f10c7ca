package io.etcdmemberagent.app;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.poll.PollOutcome;
import io.etcdmemberagent.http.AgentView;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What HTTP serves while the rest of the agent is still being wired (the server starts first, on a
 * thread of its own): alive, every check failing as "Starting", no status sections; from {@link
 * #wired} on, the agent's state.
 */
final class WiringView implements AgentView {

  private volatile AgentView wired;

  void wired(AgentView state) {
    this.wired = state;
  }

  @Override
  public List<Check> readinessChecks() {
    AgentView w = wired;
    return w == null ? AgentState.starting() : w.readinessChecks();
  }

  @Override
  public Optional<PollOutcome> latest() {
    AgentView w = wired;
    return w == null ? Optional.empty() : w.latest();
  }

  @Override
  public Optional<String> livenessProblem() {
    AgentView w = wired;
    return w == null ? Optional.empty() : w.livenessProblem();
  }

  @Override
  public Map<String, Object> statusExtras() {
    AgentView w = wired;
    return w == null ? Map.of() : w.statusExtras();
  }
}
