package io.etcdmemberagent.app.membership;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.AgentMetrics;
import io.etcdmemberagent.core.ScaleDownDecision;
import io.etcdmemberagent.core.ScaleTarget;
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
    fixture.etcd.statuses.remove(ScaleDownRoundTest.url(2)); // a staying member that is down
    fixture.sts.target = new ScaleTarget.Replicas("db", 3);
    SurplusRemover r = remover();
    r.onTermination(Duration.ZERO);
    r.onTermination(Duration.ZERO);
    assertThat(changes).as("the same word twice is announced once").hasValue(1);
    assertThat(seenAtChange.get(0))
        .as("the owner reads the new decision when told")
        .isInstanceOfSatisfying(
            ScaleDownDecision.Blocked.class,
            b -> assertThat(b.reason()).isEqualTo("SurplusStayingMemberNotReady"));
    fixture.sts.target = new ScaleTarget.Replicas("db", 4);
    r.onTermination(Duration.ZERO);
    assertThat(changes).as("a new word is announced").hasValue(2);
    assertThat(seenAtChange.get(1)).isInstanceOf(ScaleDownDecision.Idle.class);
  }
}
