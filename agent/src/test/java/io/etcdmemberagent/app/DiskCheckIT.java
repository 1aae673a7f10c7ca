package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/** The disk check on a real full disk: a small tmpfs (mounted as root) under a real etcd 3.5. */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#versions")
class DiskCheckIT {

  @Parameter String version;

  @TempDir Path dir;

  private static boolean run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  /** A fresh tmpfs with these mount options, or the test is skipped where mounting is refused. */
  private Path tmpfs(String name, String options) throws IOException, InterruptedException {
    Path mount = Files.createDirectories(dir.resolve(name));
    assumeTrue(
        run("mount", "-t", "tmpfs", "-o", options, "tmpfs", mount.toString()),
        "a tmpfs mount needs root (CI and this workplace run as root)");
    return mount;
  }

  /**
   * Writes real bytes (a sparse file would not fill tmpfs) until {@code bytes} or the disk is full.
   */
  private static void fill(Path file, long bytes) throws IOException {
    ByteBuffer chunk = ByteBuffer.allocate(1 << 20);
    try (FileChannel ch =
        FileChannel.open(
            file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
      for (long written = 0; written < bytes; written += chunk.capacity()) {
        chunk.clear();
        ch.write(chunk);
      }
    } catch (IOException e) {
      if (!String.valueOf(e.getMessage()).contains("No space left")) {
        throw e;
      }
    }
  }

  @Test
  void aFillingDiskTurnsTheDiskCheckFalseWhileEtcdStillServesAndTheAgentOutlivesEtcd()
      throws Exception {
    Path mount = tmpfs("disk", "size=256m");
    Process etcd = null;
    try {
      String endpoint = "http://127.0.0.1:" + FreePorts.next();
      Path data = mount.resolve("data");
      etcd = SingleEtcd.start(version, "disk0", data, endpoint, dir.resolve("etcd.log"));
      try (InProcessAgent agent =
          InProcessAgent.start(
              "--etcd-endpoint=" + endpoint,
              "--data-dir=" + data,
              "--disk-free-critical=30%",
              "--disk-free-warning=40%",
              "--fsync-probe-interval=300ms",
              "--poll-interval=300ms")) {
        Poll.until(
            "ready with a healthy disk",
            Duration.ofSeconds(30),
            () -> agent.get("/readyz/disk").status() == 200);
        assertThat(agent.get("/status").body()).contains("\"disk\":{", "\"reason\":\"Healthy\"");
        assertThat(agent.get("/metrics").body())
            .contains("etcd_member_agent_fsync_probe_seconds_count");

        long total = Files.getFileStore(mount).getTotalSpace();
        long usable = Files.getFileStore(mount).getUsableSpace();
        fill(mount.resolve("filler-1"), usable - total / 5);
        Poll.until(
            "the disk check failing on low space",
            Duration.ofSeconds(15),
            () ->
                agent.get("/readyz/disk").body().contains("[-]disk failed: free space below 30%"));
        assertThat(agent.get("/readyz/serving").status()).as("etcd still serves").isEqualTo(200);
        assertThat(agent.get("/readyz").status()).isEqualTo(503);

        fill(mount.resolve("filler-2"), Long.MAX_VALUE);
        Processes.kill(etcd);
        Poll.until(
            "etcd's exit reported",
            Duration.ofSeconds(15),
            () -> agent.get("/readyz/serving").body().contains("not listening"));
        assertThat(agent.get("/livez").status()).as("the agent outlives etcd").isEqualTo(200);
        assertThat(Files.isDirectory(data.resolve("member").resolve("wal")))
            .as("data untouched")
            .isTrue();
      }
    } finally {
      Processes.kill(etcd);
      run("umount", "-l", mount.toString());
    }
  }

  @Test
  void runningOutOfInodesFailsTheDiskCheck() throws Exception {
    Path mount = tmpfs("inodes", "size=256m,nr_inodes=400");
    Process etcd = null;
    try {
      String endpoint = "http://127.0.0.1:" + FreePorts.next();
      Path data = mount.resolve("data");
      etcd = SingleEtcd.start(version, "inodes0", data, endpoint, dir.resolve("etcd-inodes.log"));
      try (InProcessAgent agent =
          InProcessAgent.start(
              "--etcd-endpoint=" + endpoint,
              "--data-dir=" + data,
              "--inodes-free-critical=30%",
              "--inodes-free-warning=40%",
              "--poll-interval=300ms")) {
        Poll.until(
            "ready with inodes to spare",
            Duration.ofSeconds(30),
            () -> agent.get("/readyz/disk").status() == 200);
        assertThat(agent.get("/status").body()).containsPattern("\"totalInodes\":4[0-9][0-9]");
        Path files = Files.createDirectories(mount.resolve("many"));
        for (int i = 0; i < 320; i++) {
          try {
            Files.createFile(files.resolve("f" + i));
          } catch (IOException e) {
            break; // out of inodes already
          }
        }
        Poll.until(
            "the disk check failing on inodes",
            Duration.ofSeconds(10),
            () ->
                agent.get("/readyz/disk").body().contains("[-]disk failed: free inodes below 30%"));
        assertThat(agent.get("/metrics").body())
            .containsPattern("etcd_member_agent_disk_free_inodes_ratio 0\\.[0-2]");
      }
    } finally {
      Processes.kill(etcd);
      run("umount", "-l", mount.toString());
    }
  }
}
