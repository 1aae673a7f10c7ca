package io.etcdmemberagent.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JoinConfigTest {

  @TempDir Path dir;

  List<String> required() {
    return List.of(
        "--peer-urls=http://etcd-1.etcd:2380",
        "--cluster-endpoints=http://etcd-client:2379",
        "--data-dir=" + dir.resolve("data"),
        "--env-file=" + dir.resolve("etcd.env"));
  }

  @Test
  void theNameDefaultsToPodName() throws Exception {
    JoinConfig c = JoinConfig.parse(required(), Map.of("POD_NAME", "etcd-1"));
    assertThat(c.name()).isEqualTo("etcd-1");
    assertThat(c.bootstrapMember()).isFalse();
    assertThat(c.joinTimeout()).isZero();
  }

  @Test
  void aNameIsRequired() {
    assertThatThrownBy(() -> JoinConfig.parse(required(), Map.of()))
        .hasMessage("--name (or POD_NAME) is required");
  }

  @Test
  void onlyTheBootstrapMemberMayGoWithoutClusterEndpoints() throws Exception {
    List<String> args =
        List.of(
            "--name=etcd-0",
            "--peer-urls=http://etcd-0.etcd:2380",
            "--data-dir=" + dir.resolve("data"),
            "--env-file=" + dir.resolve("etcd.env"));
    assertThatThrownBy(() -> JoinConfig.parse(args, Map.of()))
        .hasMessage("--cluster-endpoints is required (only the --bootstrap-member may go without)");
    List<String> bootstrap = new java.util.ArrayList<>(args);
    bootstrap.add("--bootstrap-member=etcd-0");
    assertThat(JoinConfig.parse(bootstrap, Map.of()).bootstrapMember()).isTrue();
  }

  @Test
  void anEnvFileInAMissingDirectoryIsRejected() {
    List<String> args = new java.util.ArrayList<>(required());
    args.set(3, "--env-file=/nonexistent/dir/etcd.env");
    assertThatThrownBy(() -> JoinConfig.parse(args, Map.of("POD_NAME", "etcd-1")))
        .hasMessage(
            "invalid value \"/nonexistent/dir/etcd.env\" for --env-file: its directory does not exist");
  }
}
