package io.etcdmemberagent.model;

import io.etcdmemberagent.core.membership.ScaleDownDecision;

/** A decision in a few words, for the model's paths. */
final class SurplusText {

  private SurplusText() {}

  static String of(ScaleDownDecision d) {
    if (d instanceof ScaleDownDecision.Blocked b) {
      return b.reason();
    }
    if (d instanceof ScaleDownDecision.Idle i) {
      return i.reason();
    }
    return d.getClass().getSimpleName();
  }
}
