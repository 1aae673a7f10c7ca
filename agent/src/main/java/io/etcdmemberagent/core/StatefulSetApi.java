package io.etcdmemberagent.core;

/**
 * The Kubernetes calls of the scale-down rule: the size of the StatefulSet that owns the agent's
 * Pod, whether a Pod of it still has an agent that may act, and Events on the StatefulSet. Each
 * call has a timeout and answers with a value.
 */
public interface StatefulSetApi {

  /** The owning StatefulSet's {@code spec.replicas}, or why there is none to ask. */
  ScaleTarget target();

  /**
   * Whether the Pod's own agent may still act: the Pod exists and is not past its deletion deadline
   * (its {@code deletionTimestamp}, the moment its grace period ends). Absent, or not readable:
   * false only for a 404; any other failure answers true (never act on a doubt).
   */
  boolean agentMayAct(String podName);

  /** An Event on the owning StatefulSet (for removals, which outlive the removed Pod). */
  KubeAnswer createEvent(String statefulSet, PodEvent event);
}
