package io.etcdmemberagent.bench;

import java.time.Duration;
import java.util.List;

/**
 * How much to measure: {@code smoke} (one run, small data, short windows: part of the default test
 * run so the harness cannot rot) or {@code full} (what BENCHMARKS.md reports).
 */
record Settings(
    String mode,
    int runs,
    int learnerMegabytes,
    Duration steadyWindow,
    Duration loadSeconds,
    Duration apiWindow,
    Duration scaleWindow,
    Duration frozenWindow,
    List<Integer> clusterSizes) {

  static Settings fromSystemProperties() {
    String mode = System.getProperty("bench.mode", "smoke");
    boolean full = mode.equals("full");
    int runs = Integer.getInteger("bench.runs", full ? 5 : 1);
    return new Settings(
        mode,
        runs,
        Integer.getInteger("bench.learnerMegabytes", full ? 60 : 2),
        Duration.ofSeconds(Integer.getInteger("bench.steadySeconds", full ? 600 : 6)),
        Duration.ofSeconds(Integer.getInteger("bench.loadSeconds", full ? 30 : 3)),
        Duration.ofSeconds(Integer.getInteger("bench.apiSeconds", full ? 300 : 4)),
        Duration.ofSeconds(Integer.getInteger("bench.scaleSeconds", full ? 120 : 5)),
        // long enough for etcd-backup-restore's 5 s promote loop to act at least once
        Duration.ofSeconds(Integer.getInteger("bench.frozenSeconds", full ? 12 : 6)),
        full ? List.of(3, 5, 7) : List.of(3));
  }
}
