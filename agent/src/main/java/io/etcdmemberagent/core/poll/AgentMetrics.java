package io.etcdmemberagent.core.poll;

import io.etcdmemberagent.core.promotion.PromotionAttempt;

/** Where the loop reports what it did; the default does nothing. */
public interface AgentMetrics {

  AgentMetrics NONE =
      new AgentMetrics() {
        @Override
        public void recordPoll(PollOutcome outcome) {}

        @Override
        public void recordPromotion(PromotionAttempt attempt) {}

        @Override
        public void recordPatch(String result, java.time.Duration took) {}

        @Override
        public void recordEvent(String result) {}

        @Override
        public void recordKubeState(boolean pending, java.time.Instant lastSync) {}

        @Override
        public void recordTlsReload(String result) {}

        @Override
        public void recordCertificateExpiry(String certificate, java.time.Instant notAfter) {}

        @Override
        public void recordRemoval(String reason, String result) {}

        @Override
        public void recordScaleDown(boolean blocked, int surplusVoters) {}
      };

  void recordPoll(PollOutcome outcome);

  void recordPromotion(PromotionAttempt attempt);

  /** One {@code pods/status} patch: {@code result} ok, conflict, retry or rejected. */
  void recordPatch(String result, java.time.Duration took);

  /** One Event post: ok, retry, rejected or dropped (deduplicated or rate limited). */
  void recordEvent(String result);

  /** Whether a desired state waits to be written, and when the API last held ours. */
  void recordKubeState(boolean pending, java.time.Instant lastSync);

  /** One reload of changed client TLS files: success or failure. */
  void recordTlsReload(String result);

  /** When a certificate in use ({@code client}) stops being valid. */
  void recordCertificateExpiry(String certificate, java.time.Instant notAfter);

  /**
   * One act of the scale-down rule: {@code reason} is its path ({@code scale-down}, {@code
   * scale-down-catch-up}), {@code result} removed, already-removed, leader-moved or failed.
   */
  void recordRemoval(String reason, String result);

  /**
   * What this agent's last round of the scale-down rule saw: whether it blocks a surplus member's
   * removal, and how many surplus members are still voters (0 where this agent does not decide).
   */
  void recordScaleDown(boolean blocked, int surplusVoters);
}
