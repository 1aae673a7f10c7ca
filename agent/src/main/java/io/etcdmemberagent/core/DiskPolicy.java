package io.etcdmemberagent.core;

import java.time.Duration;

/**
 * Limits of the disk check: free space below {@code freeCritical} (a fraction of the filesystem)
 * fails, below {@code freeWarning} is reported; a write+fsync slower than {@code fsyncCritical}
 * fails (etcd's guidance: WAL fsync p99 under 10 ms is good, 0.5 s is bad); a backend at {@code
 * quotaCritical} of {@code quotaBytes} fails; {@code gatesReadiness} says whether a failing disk
 * check makes the member not ready.
 */
public record DiskPolicy(
    double freeCritical,
    double freeWarning,
    Duration fsyncCritical,
    long quotaBytes,
    double quotaCritical,
    boolean gatesReadiness) {}
