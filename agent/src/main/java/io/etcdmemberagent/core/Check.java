package io.etcdmemberagent.core;

/** One named readiness check: its outcome, a CamelCase reason and a human message. */
public record Check(String name, boolean passed, String reason, String message) {

  public static Check pass(String name, String reason, String message) {
    return new Check(name, true, reason, message);
  }

  public static Check fail(String name, String reason, String message) {
    return new Check(name, false, reason, message);
  }
}
