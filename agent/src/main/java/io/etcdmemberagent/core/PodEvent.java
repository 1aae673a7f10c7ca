package io.etcdmemberagent.core;

/** A Kubernetes Event on the agent's Pod: {@code type} Normal or Warning, a CamelCase reason. */
public record PodEvent(String type, String reason, String message) {

  public static PodEvent normal(String reason, String message) {
    return new PodEvent("Normal", reason, message);
  }

  public static PodEvent warning(String reason, String message) {
    return new PodEvent("Warning", reason, message);
  }
}
