package io.etcdmemberagent.core;

/** Where the loop reports what it did; the default does nothing. */
public interface AgentMetrics {

  AgentMetrics NONE =
      new AgentMetrics() {
        @Override
        public void recordPoll(PollOutcome outcome) {}

        @Override
        public void recordPromotion(PromotionAttempt attempt) {}
      };

  void recordPoll(PollOutcome outcome);

  void recordPromotion(PromotionAttempt attempt);
}
