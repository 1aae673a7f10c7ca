package io.etcdmemberagent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MainTest {
  @Test
  void configurationErrorsExitWithTwo() {
    assertThat(Main.execute(List.of(), Map.of())).isEqualTo(2);
    assertThat(Main.execute(List.of("frobnicate"), Map.of())).isEqualTo(2);
    assertThat(Main.execute(List.of("run", "--poll-interval=soon"), Map.of())).isEqualTo(2);
    assertThat(Main.execute(List.of("run"), Map.of("ETCD_MEMBER_AGENT_HTTP_PORT", "x")))
        .isEqualTo(2);
  }

  @Test
  void kubernetesAskedForButAbsentExitsWithTwo() {
    assertThat(Main.execute(List.of("run", "--kube=on", "--http-port=0"), Map.of())).isEqualTo(2);
    assertThat(Main.execute(List.of("run", "--kube=on", "--kubeconfig=/nonexistent"), Map.of()))
        .isEqualTo(2);
  }

  @Test
  void unusableCertificateFilesExitWithTwo(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws Exception {
    java.nio.file.Path garbage = java.nio.file.Files.writeString(dir.resolve("x.pem"), "junk\n");
    var pki = new io.etcdmemberagent.testing.TestPki(dir, "main");
    var a = pki.issue("a");
    var b = pki.issue("b");
    for (List<String> args :
        List.of(
            List.of("run", "--http-port=0", "--cacert=" + garbage),
            List.of("run", "--http-port=0", "--cert=" + a.cert(), "--key=" + b.key()),
            List.of("run", "--http-port=0", "--cert=" + garbage, "--key=" + a.key()),
            List.of("run", "--http-port=0", "--peer-cacert=" + garbage),
            List.of("run", "--http-port=0", "--peer-cert=" + dir.resolve("missing.pem")),
            List.of(
                "join",
                "--name=m",
                "--peer-urls=http://127.0.0.1:2380",
                "--data-dir=" + dir,
                "--env-file=" + dir.resolve("env"),
                "--cluster-endpoints=http://127.0.0.1:1",
                "--cacert=" + garbage))) {
      assertThat(Main.execute(args, Map.of())).as(String.join(" ", args)).isEqualTo(2);
    }
  }

  @Test
  void versionAndHelpSucceed() {
    assertThat(Main.execute(List.of("version"), Map.of())).isEqualTo(0);
    assertThat(Main.execute(List.of("run", "--help"), Map.of())).isEqualTo(0);
  }
}
