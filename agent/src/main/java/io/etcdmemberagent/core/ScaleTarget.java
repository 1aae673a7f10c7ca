package io.etcdmemberagent.core;

/** What the member's StatefulSet says about the cluster's size. */
public sealed interface ScaleTarget {

  /** The StatefulSet {@code name} asks for {@code replicas} Pods. */
  record Replicas(String statefulSet, int replicas) implements ScaleTarget {}

  /**
   * No StatefulSet to ask (outside Kubernetes, a Pod without one, the StatefulSet deleted, or not
   * readable): nothing is ever surplus.
   */
  record None(String reason) implements ScaleTarget {}
}
