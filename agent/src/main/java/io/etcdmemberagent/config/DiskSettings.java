package io.etcdmemberagent.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/** The disk check's flags; no {@code --data-dir} means no disk check. */
public record DiskSettings(
    Optional<Path> dataDir,
    double freeCritical,
    double freeWarning,
    double inodesCritical,
    double inodesWarning,
    Duration fsyncProbeInterval,
    Duration fsyncCritical,
    long quotaBytes,
    double quotaCritical,
    boolean gatesReadiness) {}
