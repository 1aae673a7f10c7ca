package io.etcdmemberagent.disk;

import io.etcdmemberagent.core.disk.DbFileState;
import io.etcdmemberagent.core.disk.DiskFacts;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Optional;

/**
 * Looks at the data dir with java.nio: exists, readable, etcd's layout, free space and inodes of
 * its filesystem, whether the backend file's meta pages are valid; and every probe interval writes
 * 4 KiB to a scratch file next to the data dir (inside it only when the data dir is the root of its
 * volume), fsyncs it, times it and deletes it. Never changes etcd's files.
 */
public final class FileSystemProbe {

  private static final int PROBE_BYTES = 4096;

  private final Path dataDir;
  private final Path scratch;
  private final Duration probeInterval;
  private long lastProbeNanos;
  private boolean probed;
  private Optional<Duration> lastFsync = Optional.empty();
  private Optional<String> fsyncError = Optional.empty();
  private DbFileState lastDbFile = new DbFileState.Missing();
  private Path storePath;
  private FileStore store;

  public FileSystemProbe(Path dataDir, Duration probeInterval) {
    this.dataDir = dataDir.toAbsolutePath().normalize();
    this.scratch = scratchFor(this.dataDir);
    this.probeInterval = probeInterval;
  }

  /**
   * Next to the data dir, on its filesystem; but a data dir that is the root of its volume (etcd's
   * documented StatefulSet mounts its volume at {@code --data-dir}) has its parent on another
   * filesystem, often a read-only root: then inside it, where etcd ignores a file it does not know
   * (it is deleted after each probe).
   */
  static Path scratchFor(Path dataDir) {
    Path parent = dataDir.getParent() == null ? dataDir : dataDir.getParent();
    Path beside = parent.resolve("." + dataDir.getFileName() + ".agent-fsync-probe");
    try {
      if (Files.isDirectory(dataDir)
          && !Files.getFileStore(dataDir).equals(Files.getFileStore(parent))) {
        return dataDir.resolve(".etcd-member-agent-fsync-probe");
      }
    } catch (IOException e) {
      // cannot tell: next to it, as before; a failing probe says so
    }
    return beside;
  }

  public Path scratchFile() {
    return scratch;
  }

  public DiskFacts probe() {
    boolean exists = Files.isDirectory(dataDir);
    Path member = dataDir.resolve("member");
    // etcd makes member/ 0700: an agent running as another user sees it but not inside it
    boolean readable =
        exists
            && Files.isReadable(dataDir)
            && (!Files.exists(member) || Files.isExecutable(member) && Files.isReadable(member));
    boolean etcd =
        Files.isDirectory(member.resolve("wal")) || Files.isDirectory(member.resolve("snap"));
    long usable = -1;
    long total = -1;
    Path statPath = exists ? dataDir : scratch.getParent();
    try {
      FileStore store = storeOf(statPath);
      usable = store.getUsableSpace();
      total = store.getTotalSpace();
    } catch (IOException e) {
      storePath = null; // reported through exists/readable; sizes stay unknown
    }
    Optional<FilesystemInodes.Inodes> inodes = FilesystemInodes.of(statPath);
    DbFileState db =
        readable ? dbFile(member.resolve("snap").resolve("db")) : new DbFileState.Missing();
    boolean due = !probed || System.nanoTime() - lastProbeNanos >= probeInterval.toNanos();
    if (due && exists) {
      fsyncProbe();
    }
    return new DiskFacts(
        exists,
        readable,
        etcd,
        usable,
        total,
        inodes.map(FilesystemInodes.Inodes::free).orElse(-1L),
        inodes.map(FilesystemInodes.Inodes::total).orElse(-1L),
        db,
        lastFsync,
        fsyncError,
        due && exists);
  }

  /**
   * The filesystem of {@code path}, found once: finding it reads the whole mount table (hundreds of
   * entries on a Kubernetes node), while its space is asked of the path itself every time.
   */
  private FileStore storeOf(Path path) throws IOException {
    if (!path.equals(storePath)) {
      store = Files.getFileStore(path);
      storePath = path;
    }
    return store;
  }

  /** The db file's state; the last one seen when an interrupt (shutdown) cut the read short. */
  private DbFileState dbFile(Path db) {
    try {
      lastDbFile = BoltMetaPages.read(db);
    } catch (ClosedByInterruptException e) {
      Thread.currentThread().interrupt();
    }
    return lastDbFile;
  }

  private void fsyncProbe() {
    probed = true;
    lastProbeNanos = System.nanoTime();
    long started = System.nanoTime();
    try (FileChannel ch =
        FileChannel.open(
            scratch,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(ByteBuffer.allocate(PROBE_BYTES));
      ch.force(true);
      lastFsync = Optional.of(Duration.ofNanos(System.nanoTime() - started));
      fsyncError = Optional.empty();
    } catch (IOException e) {
      fsyncError = Optional.of(e.getClass().getSimpleName() + ": " + e.getMessage());
    } finally {
      try {
        Files.deleteIfExists(scratch);
      } catch (IOException ignored) {
        // a leftover 4 KiB scratch file is harmless and overwritten next time
      }
    }
  }
}
