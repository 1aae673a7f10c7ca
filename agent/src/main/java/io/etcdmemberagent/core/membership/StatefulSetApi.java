package io.etcdmemberagent.core.membership;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.PodEvent;

/**
 * The Kubernetes calls of the scale-down rule: the size of the StatefulSet that owns the agent's
 * Pod, what is known of a Pod of it (running, terminating, gone), and Events on the StatefulSet.
 * Each call has a timeout and answers with a value.
 */
public interface StatefulSetApi {

  /** The owning StatefulSet's {@code spec.replicas}, or why there is none to ask. */
  ScaleTarget target();

  /**
   * A Pod of the StatefulSet as the scale-down rule sees it: {@link SurplusPod#GONE} when it is
   * absent (404) or past its deletion deadline (its {@code deletionTimestamp}, the moment its grace
   * period ends), {@link SurplusPod#TERMINATING} while it is being deleted, and also when it could
   * not be read (never act on a doubt), {@link SurplusPod#RUNNING} otherwise.
   */
  SurplusPod pod(String podName);

  /** {@link #pod} of the agent's own Pod: whether it is being deleted. */
  SurplusPod ownPod();

  /** An Event on the owning StatefulSet (for removals, which outlive the removed Pod). */
  KubeAnswer createEvent(String statefulSet, PodEvent event);
}
