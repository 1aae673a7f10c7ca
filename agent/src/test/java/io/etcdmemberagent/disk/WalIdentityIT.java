package io.etcdmemberagent.disk;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.api.StatusResponse;
import io.etcdmemberagent.core.join.DataDirMember;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The member and cluster ids {@code join} reads from a data dir's WAL are the ones the real etcd
 * reports for that member, on every version, while it runs and after it stopped.
 */
class WalIdentityIT {

  @TempDir Path dir;

  static List<String> versions() {
    return EtcdBinaries.withNewest();
  }

  @ParameterizedTest
  @MethodSource("versions")
  void theWalNamesTheMemberEtcdReports(String version) throws Exception {
    String endpoint = "http://127.0.0.1:" + FreePorts.next();
    Path data = dir.resolve("m0.etcd");
    assertThat(WalIdentity.read(data)).isEqualTo(new DataDirMember.Empty());
    Process etcd = SingleEtcd.start(version, "m0", data, endpoint, dir.resolve("etcd.log"));
    try (EtcdTestClient client = new EtcdTestClient()) {
      StatusResponse[] status = new StatusResponse[1];
      Poll.until(
          "etcd " + version + " answers Status",
          Duration.ofSeconds(30),
          () -> (status[0] = client.status(endpoint)) != null);
      DataDirMember running = WalIdentity.read(data);
      assertThat(running)
          .isEqualTo(
              new DataDirMember.Identified(
                  status[0].getHeader().getMemberId(), status[0].getHeader().getClusterId()));
      Processes.kill(etcd);
      assertThat(WalIdentity.read(data)).isEqualTo(running);
    } finally {
      Processes.kill(etcd);
    }
  }

  /** etcd's documented StatefulSet: {@code --data-dir=/data --wal-dir=/data/wal}. */
  @Test
  void aSeparateWalDirNamesTheMemberWhenToldWhereItIs() throws Exception {
    String endpoint = "http://127.0.0.1:" + FreePorts.next();
    Path data = dir.resolve("data");
    Path wal = data.resolve("wal");
    Process etcd =
        SingleEtcd.start(
            EtcdBinaries.primary(),
            "m0",
            data,
            endpoint,
            dir.resolve("wal-dir.log"),
            "--wal-dir=" + wal);
    try (EtcdTestClient client = new EtcdTestClient()) {
      StatusResponse[] status = new StatusResponse[1];
      Poll.until(
          "etcd answers Status",
          Duration.ofSeconds(30),
          () -> (status[0] = client.status(endpoint)) != null);
      Processes.kill(etcd);
      assertThat(WalIdentity.read(data, java.util.Optional.of(wal)))
          .isEqualTo(
              new DataDirMember.Identified(
                  status[0].getHeader().getMemberId(), status[0].getHeader().getClusterId()));
      assertThat(WalIdentity.read(data))
          .as("without --wal-dir the member is there but its WAL is not found: never Empty")
          .isInstanceOf(DataDirMember.Unreadable.class);
      assertThat(WalIdentity.read(dir.resolve("none"), java.util.Optional.of(dir.resolve("nowal"))))
          .isEqualTo(new DataDirMember.Empty());
    } finally {
      Processes.kill(etcd);
    }
  }

  @Test
  void aMemberDirWithoutAReadableWalIsUnreadableNotEmpty() throws Exception {
    Path data = dir.resolve("broken");
    Files.createDirectories(data.resolve("member").resolve("wal"));
    Files.write(data.resolve("member/wal/0000000000000000-0000000000000000.wal"), new byte[64]);
    assertThat(WalIdentity.read(data)).isInstanceOf(DataDirMember.Unreadable.class);
    Files.write(data.resolve("member/wal/0000000000000000-0000000000000000.wal"), new byte[] {9});
    assertThat(WalIdentity.read(data)).isInstanceOf(DataDirMember.Unreadable.class);
  }
}
