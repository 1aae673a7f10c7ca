package io.etcdmemberagent.core.membership;

/** What the member's StatefulSet says about the cluster's size. */
public sealed interface ScaleTarget {

  /**
   * The StatefulSet {@code name} asks for {@code replicas} Pods with ordinals {@code start ..
   * start+replicas-1} ({@code spec.ordinals.start}, 0 when unset).
   */
  record Replicas(String statefulSet, int replicas, int start) implements ScaleTarget {

    public Replicas(String statefulSet, int replicas) {
      this(statefulSet, replicas, 0);
    }

    /** Whether a Pod with this ordinal is one the StatefulSet wants. */
    public boolean wants(int ordinal) {
      return ordinal >= start && ordinal - start < replicas;
    }

    /** The ordinals wanted, as {@code a..b} (empty at replicas 0). */
    public String range() {
      return replicas == 0 ? "none" : start + ".." + (start + replicas - 1);
    }
  }

  /**
   * No StatefulSet to ask (outside Kubernetes, a Pod without one, the StatefulSet deleted): nothing
   * is ever surplus.
   */
  record None(String reason) implements ScaleTarget {}

  /**
   * The StatefulSet could not be read now (the API server failed or timed out): nothing is decided,
   * and a bounded caller asks again. {@code refused}: the API server refused the agent itself (401:
   * its ServiceAccount is gone; 403: its Role or binding is), as at an uninstall; the fast path
   * then settles as "not surplus" instead of waiting its whole budget, while the catch-up path and
   * {@code join} still treat it as unread.
   */
  record Unread(String reason, boolean refused) implements ScaleTarget {

    public Unread(String reason) {
      this(reason, false);
    }
  }
}
