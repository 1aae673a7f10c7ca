package io.etcdmemberagent.http;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.poll.PollOutcome;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What the HTTP endpoints read; answered from memory, never by calling etcd. */
public interface AgentView {

  /** The checks /readyz judges, or a single failing check while there is no verdict. */
  List<Check> readinessChecks();

  Optional<PollOutcome> latest();

  /** Empty when the loop is alive; otherwise why not. */
  Optional<String> livenessProblem();

  /** Extra sections of /status (configuration, agent facts). */
  Map<String, Object> statusExtras();
}
