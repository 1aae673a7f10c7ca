package io.etcdmemberagent.core.membership;

import static io.etcdmemberagent.core.membership.ScaleDownRuleTest.catchUp;
import static io.etcdmemberagent.core.membership.ScaleDownRuleTest.decide;
import static io.etcdmemberagent.core.membership.ScaleDownRuleTest.members;
import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.publish.ConditionNames;
import io.etcdmemberagent.core.publish.ConditionStatus;
import io.etcdmemberagent.core.publish.MembershipCondition;
import io.etcdmemberagent.core.publish.PodCondition;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The membership-settled condition, from the rule's own decisions. */
class MembershipConditionTest {

  @Test
  void aSurplusMemberTheRuleMayNotRemoveIsFalseWithTheRulesReason() {
    // db-1 and db-2 down: removing db-4 would leave 2 healthy of 4
    PodCondition c = MembershipCondition.of(catchUp(members(5), 3, 1, Set.of(1L, 4L, 5L), 1));
    assertThat(c.name()).isEqualTo(ConditionNames.MEMBERSHIP_SETTLED);
    assertThat(c.status()).isEqualTo(ConditionStatus.FALSE);
    assertThat(c.reason()).isEqualTo("SurplusQuorumAtRisk");
    assertThat(c.message()).contains("db-4");
  }

  @Test
  void aRemovalUnderWayOrAwaitingItsTurnIsFalseToo() {
    assertThat(MembershipCondition.of(catchUp(members(5), 3, 1, Set.of(1L, 2L, 3L, 4L, 5L), 1)))
        .satisfies(
            c -> {
              assertThat(c.status()).isEqualTo(ConditionStatus.FALSE);
              assertThat(c.reason()).isEqualTo("SurplusMemberRemoving");
              assertThat(c.message()).contains("ordinal 4");
            });
    assertThat(
            MembershipCondition.of(
                    decide(
                        members(5),
                        3,
                        1,
                        Set.of(1L, 2L, 3L, 4L, 5L),
                        new ScaleDownTrigger.OwnPodTerminating(4)))
                .reason())
        .isEqualTo("SurplusAwaitingTurn");
    assertThat(
            MembershipCondition.of(
                    decide(
                        members(4),
                        3,
                        4,
                        Set.of(1L, 2L, 3L, 4L),
                        new ScaleDownTrigger.OwnPodTerminating(4)))
                .reason())
        .isEqualTo("SurplusLeaderMoving");
  }

  @Test
  void nothingSurplusIsTrueAndNotDecidingHereIsUnknown() {
    Membership.Known three = members(3);
    assertThat(
            MembershipCondition.of(
                decide(three, 3, 1, Set.of(1L, 2L, 3L), new ScaleDownTrigger.CatchUp(1))))
        .extracting(PodCondition::status, PodCondition::reason)
        .containsExactly(ConditionStatus.TRUE, "NoSurplusMember");
    assertThat(
            MembershipCondition.of(
                decide(three, 0, 1, Set.of(1L, 2L, 3L), new ScaleDownTrigger.CatchUp(1))))
        .extracting(PodCondition::status, PodCondition::reason)
        .containsExactly(ConditionStatus.TRUE, "Paused");
    assertThat(
            MembershipCondition.of(
                decide(
                    members(5), 3, 1, Set.of(1L, 2L, 3L, 4L, 5L), new ScaleDownTrigger.CatchUp(2))))
        .extracting(PodCondition::status, PodCondition::reason)
        .containsExactly(ConditionStatus.UNKNOWN, "NotTheLeader");
    assertThat(
            MembershipCondition.of(
                decide(
                    members(5), 3, 1, Set.of(1L, 2L, 3L, 4L, 5L), new ScaleDownTrigger.CatchUp(1))))
        .extracting(PodCondition::status, PodCondition::reason)
        .containsExactly(ConditionStatus.FALSE, "SurplusPodPresent");
    assertThat(MembershipCondition.off("--remove-surplus-members=false"))
        .extracting(PodCondition::status, PodCondition::reason)
        .containsExactly(ConditionStatus.UNKNOWN, "NotChecked");
  }
}
