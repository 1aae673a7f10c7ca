package io.etcdmemberagent.app.membership;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.membership.ScaleDownDecision;
import io.etcdmemberagent.core.membership.ScaleTarget;
import io.etcdmemberagent.core.membership.SurplusPod;
import io.etcdmemberagent.core.poll.AgentMetrics;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The remover tells its owner each time the rule's word changes, so that the Pod's condition shows
 * a blocked removal at once and not only with the next poll (which may take many etcd timeouts).
 */
class SurplusRemoverTest {

  final ScaleDownRoundTest fixture = new ScaleDownRoundTest();
  final AtomicInteger changes = new AtomicInteger();
  final List<ScaleDownDecision> seenAtChange = new ArrayList<>();
  SurplusRemover remover;

  SurplusRemover remover() {
    remover =
        new SurplusRemover(
            fixture.round,
            () -> 4,
            () -> false,
            fixture.sts,
            AgentMetrics.NONE,
            e -> {},
            t -> {},
            () -> {
              changes.incrementAndGet();
              seenAtChange.add(remover.lastDecision());
            },
            Clock.systemUTC());
    return remover;
  }

  @Test
  void aBlockedRemovalIsAnnouncedOnceWithTheDecisionAlreadyInPlace() {
    fixture.cluster(4, 1);
    // two staying members down: removing db-3 would leave 1 healthy voter of 3
    fixture.etcd.statuses.remove(ScaleDownRoundTest.url(0));
    fixture.etcd.statuses.remove(ScaleDownRoundTest.url(1));
    fixture.sts.target = new ScaleTarget.Replicas("db", 3);
    SurplusRemover r = remover();
    r.onTermination(Duration.ofMillis(1100)); // three rounds, 500 ms apart, the same word
    assertThat(changes).as("the same word thrice is announced once").hasValue(1);
    assertThat(seenAtChange.get(0))
        .as("the owner reads the new decision when told")
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> assertThat(b.reason()).isEqualTo("SurplusQuorumAtRisk"));
    long lists = fixture.etcd.calls.stream().filter(c -> c.contains("list")).count();
    assertThat(lists).as("one member list a round").isEqualTo(3);
    fixture.sts.target = new ScaleTarget.Replicas("db", 4);
    r.onTermination(Duration.ofSeconds(5));
    assertThat(r.hold(Duration.ofSeconds(5)))
        .as("a second SIGTERM or a hold joins the settlement that ran: no new round")
        .isCompletedWithValueMatching(v -> v.startsWith("the budget ran out: SurplusQuorumAtRisk"));
    assertThat(fixture.etcd.calls.stream().filter(c -> c.contains("list")).count())
        .isEqualTo(lists);
    assertThat(r.removedItself()).as("blocked: nothing removed").isFalse();
  }

  @Test
  void aHoldOfAPodNotBeingDeletedAnswersAtOnceAndStartsNothing() {
    fixture.cluster(4, 1);
    fixture.sts.target = new ScaleTarget.Replicas("db", 3);
    fixture.sts.own = SurplusPod.RUNNING; // a container restart, not a deletion
    SurplusRemover r = remover();
    assertThat(r.hold(Duration.ofSeconds(5)))
        .isCompletedWithValueMatching(v -> v.contains("not being deleted"));
    assertThat(fixture.etcd.calls).as("no round ran").isEmpty();
  }

  @Test
  void aHoldOfAPodBeingDeletedSettlesItsMemberFirst() throws Exception {
    fixture.cluster(4, 1);
    fixture.sts.target = new ScaleTarget.Replicas("db", 3);
    SurplusRemover r = remover();
    String outcome = r.hold(Duration.ofSeconds(5)).get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(outcome).startsWith("settled: remove 4");
    assertThat(fixture.etcd.calls).contains("remove " + ScaleDownRoundTest.url(0) + " 4");
    assertThat(r.removedItself())
        .as("the stopping agent then waits longer for a late hold: its Pod is being deleted")
        .isTrue();
  }
}
