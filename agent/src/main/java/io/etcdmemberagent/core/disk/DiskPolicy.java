package io.etcdmemberagent.core.disk;

import java.time.Duration;

/**
 * Limits of the disk check: free space or free inodes below their {@code critical} share of the
 * filesystem fails, below {@code warning} is reported; a write+fsync slower than {@code
 * fsyncCritical} fails (etcd's guidance: WAL fsync p99 under 10 ms is good, 0.5 s is bad); a
 * backend at {@code quotaCritical} of {@code quotaBytes} fails; {@code gatesReadiness} says whether
 * a failing disk check makes the member not ready.
 */
public record DiskPolicy(
    double freeCritical,
    double freeWarning,
    double inodesCritical,
    double inodesWarning,
    Duration fsyncCritical,
    long quotaBytes,
    double quotaCritical,
    boolean gatesReadiness) {}
