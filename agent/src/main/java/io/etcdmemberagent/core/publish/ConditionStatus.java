package io.etcdmemberagent.core.publish;

/** A Kubernetes condition status: True, False, or Unknown (the agent cannot tell). */
public enum ConditionStatus {
  TRUE("True"),
  FALSE("False"),
  UNKNOWN("Unknown");

  private final String text;

  ConditionStatus(String text) {
    this.text = text;
  }

  public String text() {
    return text;
  }

  public static ConditionStatus of(boolean healthy) {
    return healthy ? TRUE : FALSE;
  }

  public static ConditionStatus parse(String text) {
    for (ConditionStatus s : values()) {
      if (s.text.equals(text)) {
        return s;
      }
    }
    return UNKNOWN;
  }
}
