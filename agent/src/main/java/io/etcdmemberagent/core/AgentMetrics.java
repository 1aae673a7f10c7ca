package io.etcdmemberagent.core;

/** Where the loop reports what it did; the default does nothing. */
public interface AgentMetrics {

  AgentMetrics NONE = outcome -> {};

  void recordPoll(PollOutcome outcome);
}
