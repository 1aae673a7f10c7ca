package io.etcdmemberagent.core;

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
   * and a bounded caller asks again.
   */
  record Unread(String reason) implements ScaleTarget {}
}
