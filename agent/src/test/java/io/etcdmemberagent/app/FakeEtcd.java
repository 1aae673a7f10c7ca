package io.etcdmemberagent.app;

import io.etcdmemberagent.core.AddAnswer;
import io.etcdmemberagent.core.ChangeAnswer;
import io.etcdmemberagent.core.EtcdGateway;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.Membership;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** An {@link EtcdGateway} answering from tables, recording every call in order. */
public final class FakeEtcd implements EtcdGateway {
  public final Map<String, LocalObservation> statuses = new HashMap<>();
  public final Map<String, Membership> lists = new HashMap<>();

  /**
   * Linearizable answers where they differ from {@link #lists} (a lagging member's local view);
   * otherwise a linearizable read answers as {@link #lists} does.
   */
  public final Map<String, Membership> linearizableLists = new HashMap<>();

  /** Answers to remove calls, in order; accepted when empty. */
  public final Deque<ChangeAnswer> removeAnswers = new ArrayDeque<>();

  /** Answers to promote calls, in order; accepted when empty. */
  public final Deque<ChangeAnswer> promoteAnswers = new ArrayDeque<>();

  /** Applied to {@link #lists} when a promote is made (the server applies it). */
  public Runnable onPromote = () -> {};

  public final List<String> calls = new ArrayList<>();

  @Override
  public LocalObservation status(String endpoint) {
    calls.add("status " + endpoint);
    return statuses.getOrDefault(endpoint, new LocalObservation.Refused(endpoint));
  }

  @Override
  public java.util.Optional<List<io.etcdmemberagent.core.Alarm>> alarmList(String endpoint) {
    return java.util.Optional.empty();
  }

  @Override
  public Membership linearizableMemberList(String endpoint) {
    calls.add("linearizable list " + endpoint);
    Membership m = linearizableLists.get(endpoint);
    if (m == null) {
      m = lists.getOrDefault(endpoint, new Membership.Unknown(endpoint + " down"));
    }
    return m instanceof Membership.Known k ? new Membership.Known(k.members(), endpoint) : m;
  }

  @Override
  public Membership memberList(String endpoint) {
    calls.add("list " + endpoint);
    Membership m = lists.getOrDefault(endpoint, new Membership.Unknown(endpoint + " down"));
    // read from where it was asked, as the gateway reports it
    return m instanceof Membership.Known k ? new Membership.Known(k.members(), endpoint) : m;
  }

  @Override
  public ChangeAnswer promote(String endpoint, long memberId) {
    calls.add("promote " + endpoint + " " + memberId);
    onPromote.run();
    return promoteAnswers.isEmpty() ? new ChangeAnswer.Accepted() : promoteAnswers.removeFirst();
  }

  /** Answers to add calls, in order; an error when empty (tests that add set them). */
  public final Deque<AddAnswer> addAnswers = new ArrayDeque<>();

  @Override
  public AddAnswer addLearner(String endpoint, List<String> peerUrls) {
    calls.add("add " + endpoint + " " + peerUrls);
    return addAnswers.isEmpty()
        ? new AddAnswer.Error("UNAVAILABLE", "no answer scripted")
        : addAnswers.removeFirst();
  }

  @Override
  public ChangeAnswer removeMember(String endpoint, long memberId) {
    calls.add("remove " + endpoint + " " + memberId);
    return removeAnswers.isEmpty() ? new ChangeAnswer.Accepted() : removeAnswers.removeFirst();
  }

  @Override
  public ChangeAnswer moveLeader(String leaderEndpoint, long transfereeId) {
    calls.add("move-leader " + leaderEndpoint + " " + transfereeId);
    return new ChangeAnswer.Accepted();
  }

  @Override
  public void close() {}
}
