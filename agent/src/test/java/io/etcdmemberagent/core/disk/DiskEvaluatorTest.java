package io.etcdmemberagent.core.disk;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;
import io.etcdmemberagent.core.LeaderObservation;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.core.promotion.LearnerProgress;
import io.etcdmemberagent.core.promotion.PromotionDecision;
import io.etcdmemberagent.core.promotion.PromotionPolicy;
import io.etcdmemberagent.core.promotion.PromotionTracker;
import io.etcdmemberagent.core.publish.ConditionNames;
import io.etcdmemberagent.core.publish.ConditionStatus;
import io.etcdmemberagent.core.publish.DesiredConditions;
import io.etcdmemberagent.core.publish.PodCondition;
import io.etcdmemberagent.core.readiness.MemberEvaluator;
import io.etcdmemberagent.core.readiness.MemberSnapshot;
import io.etcdmemberagent.core.readiness.ReadinessPolicy;
import io.etcdmemberagent.core.readiness.Verdict;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Also the fixtures (snapshots, members) of the other rooms' tests. */
public class DiskEvaluatorTest {

  public static final DiskPolicy POLICY =
      new DiskPolicy(0.05, 0.15, 0.05, 0.10, Duration.ofMillis(500), 1000, 0.95, true);
  public static final DiskEvaluator EVALUATOR = new DiskEvaluator(POLICY);

  public static DiskFacts facts(
      boolean exists, boolean etcd, long usable, Duration fsync, String error) {
    return facts(exists, etcd, usable, 1000, new DbFileState.Valid(), fsync, error);
  }

  public static DiskFacts facts(
      boolean exists,
      boolean etcd,
      long usable,
      long freeInodes,
      DbFileState db,
      Duration fsync,
      String error) {
    return new DiskFacts(
        exists,
        exists,
        etcd,
        usable,
        100,
        freeInodes,
        1000,
        db,
        Optional.ofNullable(fsync),
        Optional.ofNullable(error),
        true);
  }

  public static String reason(DiskFacts f, long dbSize) {
    return EVALUATOR.check(f, dbSize).reason();
  }

  @Test
  void judgesEveryLimit() {
    Duration fast = Duration.ofMillis(2);
    assertThat(reason(facts(true, true, 50, fast, null), 10)).isEqualTo("Healthy");
    assertThat(reason(facts(false, false, 50, null, null), 10)).isEqualTo("DataDirMissing");
    assertThat(reason(facts(true, false, 50, fast, null), 10)).isEqualTo("NotAnEtcdDataDir");
    assertThat(reason(facts(true, true, 4, fast, null), 10)).isEqualTo("LowDiskSpace");
    assertThat(reason(facts(true, true, 50, null, "IOException: No space left on device"), 10))
        .isEqualTo("FsyncFailed");
    assertThat(reason(facts(true, true, 50, Duration.ofMillis(501), null), 10))
        .isEqualTo("SlowFsync");
    assertThat(reason(facts(true, true, 50, fast, null), 950)).isEqualTo("QuotaNearlyFull");
    assertThat(reason(facts(true, true, 50, fast, null), -1)).isEqualTo("Healthy");
    Check warned = EVALUATOR.check(facts(true, true, 10, fast, null), 10);
    assertThat(warned.passed()).isTrue();
    assertThat(warned.message()).contains("below the warning level 15%");
  }

  @Test
  void judgesInodesAndTheDbFile() {
    Duration fast = Duration.ofMillis(2);
    DbFileState valid = new DbFileState.Valid();
    assertThat(reason(facts(true, true, 50, 40, valid, fast, null), 10)).isEqualTo("LowFreeInodes");
    Check warned = EVALUATOR.check(facts(true, true, 50, 80, valid, fast, null), 10);
    assertThat(warned.passed()).isTrue();
    assertThat(warned.message()).contains("free inodes below the warning level 10%");
    assertThat(reason(facts(true, true, 50, -1, valid, fast, null), 10)).isEqualTo("Healthy");
    assertThat(
            reason(
                facts(true, true, 50, 900, new DbFileState.Corrupt("invalid magic"), fast, null),
                10))
        .isEqualTo("CorruptDatabase");
    assertThat(reason(facts(true, true, 50, 900, new DbFileState.Missing(), fast, null), 10))
        .isEqualTo("Healthy");
  }

  @Test
  void aSilentMemberWithACorruptDbFileSaysSoInTheServingCheck() {
    MemberEvaluator evaluator =
        new MemberEvaluator(new ReadinessPolicy(100), Optional.of(EVALUATOR));
    DiskFacts corrupt =
        facts(
            true,
            true,
            50,
            900,
            new DbFileState.Corrupt("meta page 0: invalid magic"),
            Duration.ofMillis(1),
            null);
    MemberSnapshot snapshot =
        new MemberSnapshot(
            java.time.Instant.EPOCH,
            new LocalObservation.Refused("connection refused"),
            new Membership.Unknown("no voter"),
            new LeaderObservation.Unavailable("silent"),
            List.of(),
            7,
            Optional.of(corrupt));
    Verdict verdict = evaluator.evaluate(snapshot);
    assertThat(verdict.check(CheckNames.SERVING).orElseThrow().reason())
        .isEqualTo("CorruptDatabase");
    assertThat(verdict.disk().orElseThrow().reason()).isEqualTo("CorruptDatabase");
    var ready =
        DesiredConditions.from(
                verdict,
                new LearnerProgress(
                    false,
                    false,
                    Duration.ZERO,
                    java.util.OptionalDouble.empty(),
                    Optional.empty()))
            .stream()
            .filter(c -> c.name().equals(ConditionNames.READY))
            .findFirst()
            .orElseThrow();
    assertThat(ready.reason()).isEqualTo("CorruptDatabase");
  }

  @Test
  void aFailingDiskGatesReadinessAndPromotionAndShowsInTheCondition() {
    MemberEvaluator evaluator =
        new MemberEvaluator(new ReadinessPolicy(100), Optional.of(EVALUATOR));
    LocalStatus learner = new LocalStatus(1, 2, 10, 10, 2, 5, 5, true, "3.5.30", List.of());
    Membership members =
        new Membership.Known(
            List.of(
                new MemberInfo(1, "a", List.of("p1"), List.of("c1"), true),
                new MemberInfo(2, "b", List.of("p2"), List.of("c2"), false)),
            "c2");
    MemberSnapshot s =
        new MemberSnapshot(
            java.time.Instant.EPOCH,
            new LocalObservation.Answered(learner),
            members,
            new LeaderObservation.Answered(2, 10),
            List.of(),
            0,
            Optional.of(facts(true, true, 1, Duration.ofMillis(1), null)));
    Verdict v = evaluator.evaluate(s);
    assertThat(v.check(DiskEvaluator.CHECK))
        .hasValueSatisfying(c -> assertThat(c.passed()).isFalse());
    PromotionTracker tracker =
        new PromotionTracker(
            new PromotionPolicy(
                true, 100, 1, Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofMinutes(5)),
            () -> 0.0);
    assertThat(tracker.decide(s, v, java.time.Instant.EPOCH))
        .isEqualTo(
            new PromotionDecision.Hold("DiskUnhealthy", "the disk check fails: LowDiskSpace"));
    PodCondition disk =
        DesiredConditions.from(
                v,
                new LearnerProgress(
                    false,
                    false,
                    Duration.ZERO,
                    java.util.OptionalDouble.empty(),
                    Optional.empty()))
            .stream()
            .filter(c -> c.name().equals(ConditionNames.DISK_HEALTHY))
            .findFirst()
            .orElseThrow();
    assertThat(disk.status()).isEqualTo(ConditionStatus.FALSE);
    assertThat(disk.reason()).isEqualTo("LowDiskSpace");
  }
}
