package io.etcdmemberagent.core.publish;

import java.util.List;

/** What the agent reads of its own Pod: identity, generation, and our conditions on it. */
public record PodView(
    String uid, long generation, String resourceVersion, List<ConditionEntry> ours) {
  public PodView {
    ours = List.copyOf(ours);
  }
}
