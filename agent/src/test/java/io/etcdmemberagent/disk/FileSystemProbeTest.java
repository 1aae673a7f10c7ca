package io.etcdmemberagent.disk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileSystemProbeTest {

  @Test
  void theScratchFileGoesNextToTheDataDirOnItsFilesystem(@TempDir Path dir) throws Exception {
    Path data = Files.createDirectory(dir.resolve("data"));
    assertThat(FileSystemProbe.scratchFor(data)).isEqualTo(dir.resolve(".data.agent-fsync-probe"));
    assertThat(FileSystemProbe.scratchFor(dir.resolve("not-yet")))
        .as("a data dir etcd has not made yet")
        .isEqualTo(dir.resolve(".not-yet.agent-fsync-probe"));
  }

  @Test
  void aDataDirThatIsTheRootOfItsVolumeGetsTheScratchFileInside() throws Exception {
    Path mountRoot = Path.of("/dev/shm"); // a tmpfs mounted on /dev, another filesystem
    assumeTrue(
        Files.isDirectory(mountRoot)
            && !Files.getFileStore(mountRoot).equals(Files.getFileStore(mountRoot.getParent())),
        "/dev/shm is its own mount here");
    assertThat(FileSystemProbe.scratchFor(mountRoot))
        .isEqualTo(mountRoot.resolve(".etcd-member-agent-fsync-probe"));
  }
}
