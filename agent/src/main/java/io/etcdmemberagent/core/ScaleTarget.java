package io.etcdmemberagent.core;

/** What the member's StatefulSet says about the cluster's size. */
public sealed interface ScaleTarget {

  /** The StatefulSet {@code name} asks for {@code replicas} Pods. */
  record Replicas(String statefulSet, int replicas) implements ScaleTarget {}

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
