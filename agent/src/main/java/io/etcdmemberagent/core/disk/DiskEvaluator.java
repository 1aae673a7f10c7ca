package io.etcdmemberagent.core.disk;

import io.etcdmemberagent.core.Check;
import io.etcdmemberagent.core.CheckNames;

/** Judges the data dir and disk: the {@code disk} check. Pure. */
public final class DiskEvaluator {

  /**
   * Reasons that mean "the agent cannot tell" rather than "the disk is bad": the member's own etcd
   * may read its data dir well (as another user). Such a result gates no readiness, and its
   * condition is Unknown.
   */
  public static final java.util.Set<String> UNKNOWN_REASONS = java.util.Set.of("DataDirUnreadable");

  /** Whether {@code check} is a judgement of the disk, not the agent's own blindness. */
  public static boolean judged(Check check) {
    return !UNKNOWN_REASONS.contains(check.reason());
  }

  public static final String CHECK = CheckNames.DISK;

  private final DiskPolicy policy;

  public DiskEvaluator(DiskPolicy policy) {
    this.policy = policy;
  }

  public DiskPolicy policy() {
    return policy;
  }

  /** {@code dbSize}: the backend size from the local Status, or -1 when unknown. */
  public Check check(DiskFacts facts, long dbSize) {
    return check(facts, dbSize, 0);
  }

  /**
   * {@code reportedQuota}: the quota etcd 3.6+ reports in {@code Status.dbSizeQuota}, or 0 when the
   * member does not say (then {@code --quota-backend-bytes} stands in for it).
   */
  public Check check(DiskFacts facts, long dbSize, long reportedQuota) {
    if (!facts.exists()) {
      return Check.fail(CHECK, "DataDirMissing", "the data dir does not exist");
    }
    if (!facts.readable()) {
      return Check.fail(
          CHECK,
          "DataDirUnreadable",
          "the data dir (or its member/ directory, which etcd makes 0700) is not readable by the"
              + " agent: run the agent as etcd's user");
    }
    if (!facts.looksLikeEtcd()) {
      return Check.fail(CHECK, "NotAnEtcdDataDir", "the data dir has no member/wal or member/snap");
    }
    if (facts.dbFile() instanceof DbFileState.Corrupt c) {
      return Check.fail(
          CHECK,
          "CorruptDatabase",
          "member/snap/db is corrupt (" + c.detail() + "); etcd cannot start on it");
    }
    if (facts.dbFile() instanceof DbFileState.Unreadable u) {
      return Check.fail(
          CHECK, "DatabaseUnreadable", "member/snap/db cannot be read: " + u.detail());
    }
    if (facts.freeRatio() < policy.freeCritical()) {
      return Check.fail(
          CHECK, "LowDiskSpace", "free space below " + percent(policy.freeCritical()));
    }
    if (facts.freeInodeRatio() < policy.inodesCritical()) {
      return Check.fail(
          CHECK, "LowFreeInodes", "free inodes below " + percent(policy.inodesCritical()));
    }
    if (facts.fsyncError().isPresent()) {
      return Check.fail(
          CHECK, "FsyncFailed", "the write+fsync probe failed: " + facts.fsyncError().get());
    }
    if (facts.lastFsync().isPresent()
        && facts.lastFsync().get().compareTo(policy.fsyncCritical()) > 0) {
      return Check.fail(
          CHECK,
          "SlowFsync",
          "write+fsync slower than " + policy.fsyncCritical().toMillis() + "ms");
    }
    long quota = reportedQuota > 0 ? reportedQuota : policy.quotaBytes();
    if (dbSize >= 0 && dbSize >= policy.quotaCritical() * quota) {
      return Check.fail(
          CHECK,
          "QuotaNearlyFull",
          "backend at " + percent(policy.quotaCritical()) + " of its quota or more");
    }
    java.util.List<String> warnings = new java.util.ArrayList<>();
    if (facts.freeRatio() < policy.freeWarning()) {
      warnings.add("free space below the warning level " + percent(policy.freeWarning()));
    }
    if (facts.freeInodeRatio() < policy.inodesWarning()) {
      warnings.add("free inodes below the warning level " + percent(policy.inodesWarning()));
    }
    if (!warnings.isEmpty()) {
      return Check.pass(CHECK, "Healthy", "within limits, but " + String.join(" and ", warnings));
    }
    return Check.pass(
        CHECK,
        "Healthy",
        "data dir, free space"
            + (facts.inodesKnown() ? ", inodes" : "")
            + ", fsync and quota within limits");
  }

  private static String percent(double ratio) {
    return Math.round(ratio * 100) + "%";
  }
}
