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
  void versionAndHelpSucceed() {
    assertThat(Main.execute(List.of("version"), Map.of())).isEqualTo(0);
    assertThat(Main.execute(List.of("run", "--help"), Map.of())).isEqualTo(0);
  }
}
