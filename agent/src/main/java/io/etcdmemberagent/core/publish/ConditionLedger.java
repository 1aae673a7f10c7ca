package io.etcdmemberagent.core.publish;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Remembers which of our conditions the API server holds, and plans the next patch: nothing when
 * the desired conditions equal what it holds (unless a resync is due), else all of ours, with
 * {@code lastTransitionTime} kept unless the status flips. Pure.
 */
public final class ConditionLedger {

  private final Map<String, ConditionEntry> held = new HashMap<>();

  /** Takes what a freshly read Pod holds of ours (an agent restart keeps transition times). */
  public void adopt(List<ConditionEntry> fromPod) {
    held.clear();
    fromPod.forEach(e -> held.put(e.name(), e));
  }

  /** The entries to send, or empty when the API already holds the desired state. */
  public Optional<List<ConditionEntry>> plan(
      List<PodCondition> desired, Instant now, boolean resyncDue) {
    boolean changed = false;
    List<ConditionEntry> entries = new ArrayList<>();
    for (PodCondition c : desired) {
      ConditionEntry before = held.get(c.name());
      Instant transition =
          before != null && before.status() == c.status() ? before.lastTransitionTime() : now;
      entries.add(new ConditionEntry(c.name(), c.status(), c.reason(), c.message(), transition));
      changed |= before == null || !before.sameAs(c);
    }
    return changed || resyncDue ? Optional.of(entries) : Optional.empty();
  }

  /** The API server accepted these entries. */
  public void confirm(List<ConditionEntry> sent) {
    sent.forEach(e -> held.put(e.name(), e));
  }
}
