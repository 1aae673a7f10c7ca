package io.etcdmemberagent.core.disk;

import java.time.Duration;
import java.util.Optional;

/**
 * What the disk probe found about the data dir this poll: whether it exists, is readable and looks
 * like an etcd data dir ({@code member/wal} or {@code member/snap}); the free and total bytes and
 * inodes of its filesystem (-1 when unknown); the state of the backend file; and the last
 * write+fsync probe's latency or error ({@code probedNow} when that probe ran in this poll).
 */
public record DiskFacts(
    boolean exists,
    boolean readable,
    boolean looksLikeEtcd,
    long usableBytes,
    long totalBytes,
    long freeInodes,
    long totalInodes,
    DbFileState dbFile,
    Optional<Duration> lastFsync,
    Optional<String> fsyncError,
    boolean probedNow) {

  public double freeRatio() {
    return totalBytes <= 0 ? 1.0 : (double) usableBytes / totalBytes;
  }

  /** Free share of the inodes; 1 when the filesystem does not count them or they are unknown. */
  public double freeInodeRatio() {
    return totalInodes <= 0 || freeInodes < 0 ? 1.0 : (double) freeInodes / totalInodes;
  }

  public boolean inodesKnown() {
    return totalInodes > 0 && freeInodes >= 0;
  }
}
