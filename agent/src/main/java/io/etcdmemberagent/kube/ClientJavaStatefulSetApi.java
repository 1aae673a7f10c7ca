package io.etcdmemberagent.kube;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.PodEvent;
import io.etcdmemberagent.core.membership.ScaleTarget;
import io.etcdmemberagent.core.membership.StatefulSetApi;
import io.etcdmemberagent.core.membership.SurplusPod;
import java.time.Clock;
import java.util.Map;

/**
 * {@link StatefulSetApi} over the Pod adapter's connection: GET the agent's own Pod for its owner
 * reference (once found, kept: a Pod never changes its owner), GET that StatefulSet, GET other Pods
 * by name, POST Events. Needs {@code get} on {@code statefulsets} and {@code pods}.
 */
public final class ClientJavaStatefulSetApi implements StatefulSetApi {

  private final KubeHttp api;
  private final String namespace;
  private final String podName;
  private final Clock clock;
  private volatile String owner;

  public ClientJavaStatefulSetApi(ClientJavaPodApi pods, Clock clock) {
    this.api = pods.http();
    this.namespace = pods.namespace();
    this.podName = pods.podName();
    this.clock = clock;
  }

  @Override
  public ScaleTarget target() {
    try {
      String name = owner();
      if (name == null) {
        return new ScaleTarget.None("Pod " + podName + " has no StatefulSet owner");
      }
      Map<?, ?> sts = api.get("apis", "apps", "v1", "namespaces", namespace, "statefulsets", name);
      if (KubeJson.map(sts.get("metadata")).get("deletionTimestamp") != null) {
        return new ScaleTarget.None("StatefulSet " + name + " is being deleted");
      }
      Map<?, ?> spec = KubeJson.map(sts.get("spec"));
      Object replicas = spec.get("replicas");
      Object start = KubeJson.map(spec.get("ordinals")).get("start");
      // the API server defaults replicas to 1 and ordinals.start to 0; a missing field reads so
      return new ScaleTarget.Replicas(
          name,
          replicas == null ? 1 : (int) KubeJson.number(replicas),
          start == null ? 0 : (int) KubeJson.number(start));
    } catch (KubeCallException e) {
      // At an uninstall the StatefulSet, then the agent's RoleBinding and ServiceAccount go while
      // its Pods stop: a 401 or 403 is the agent refused, which the fast path takes as final
      // rather than waiting its whole budget. Anything else may pass, and is asked again.
      return switch (e.code()) {
        case 404 -> new ScaleTarget.None("StatefulSet " + owner + " is gone");
        case 401 ->
            new ScaleTarget.Unread(
                "the agent's identity is not accepted (401; is its ServiceAccount gone?): "
                    + ClientJavaPodApi.answer(e),
                true);
        case 403 ->
            new ScaleTarget.Unread(
                "the agent may not read its StatefulSet (403; is its Role or binding gone?): "
                    + ClientJavaPodApi.answer(e),
                true);
        default -> new ScaleTarget.Unread(String.valueOf(ClientJavaPodApi.answer(e)));
      };
    }
  }

  private String owner() throws KubeCallException {
    if (owner == null) {
      Map<?, ?> pod = api.get("api", "v1", "namespaces", namespace, "pods", podName);
      for (Object o : KubeJson.list(KubeJson.map(pod.get("metadata")).get("ownerReferences"))) {
        Map<?, ?> ref = KubeJson.map(o);
        if ("StatefulSet".equals(ref.get("kind")) && Boolean.TRUE.equals(ref.get("controller"))) {
          owner = KubeJson.text(ref.get("name"));
        }
      }
    }
    return owner;
  }

  @Override
  public SurplusPod pod(String pod) {
    try {
      Map<?, ?> meta =
          KubeJson.map(api.get("api", "v1", "namespaces", namespace, "pods", pod).get("metadata"));
      Object deletion = meta.get("deletionTimestamp");
      if (deletion == null) {
        return SurplusPod.RUNNING;
      }
      return clock.instant().isBefore(KubeJson.instant(deletion))
          ? SurplusPod.TERMINATING
          : SurplusPod.GONE;
    } catch (KubeCallException e) {
      return e.code() == 404 ? SurplusPod.GONE : SurplusPod.TERMINATING;
    }
  }

  /** The agent's own Pod's name. */
  public String ownPodName() {
    return podName;
  }

  @Override
  public SurplusPod ownPod() {
    return pod(podName);
  }

  @Override
  public KubeAnswer createEvent(String statefulSet, PodEvent event) {
    try {
      String uid =
          KubeJson.text(
              KubeJson.map(
                      api.get(
                              "apis",
                              "apps",
                              "v1",
                              "namespaces",
                              namespace,
                              "statefulsets",
                              statefulSet)
                          .get("metadata"))
                  .get("uid"));
      return ClientJavaPodApi.postEvent(
          api,
          namespace,
          podName,
          Map.of(
              "apiVersion", "apps/v1",
              "kind", "StatefulSet",
              "name", statefulSet,
              "namespace", namespace,
              "uid", uid),
          event);
    } catch (KubeCallException e) {
      return ClientJavaPodApi.answer(e);
    }
  }
}
