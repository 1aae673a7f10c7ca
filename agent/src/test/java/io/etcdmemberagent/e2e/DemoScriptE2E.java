package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.EtcdBinaries;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code test-e2e/demo.sh} runs to its end and tells the story it promises, on every etcd version
 * it offers (3.6, its default; 3.5; 3.7; 3.4, which read the script's {@code ETCD_VERSION} as its
 * own flag until the script unset it).
 */
class DemoScriptE2E {

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("io.etcdmemberagent.testing.EtcdBinaries#all")
  void theDemoRunsToItsEnd(String version) throws Exception {
    Path script = Path.of("..", "test-e2e", "demo.sh").toAbsolutePath().normalize();
    Path out = Files.createTempFile("demo", ".out");
    try {
      ProcessBuilder pb =
          new ProcessBuilder("bash", script.toString())
              .redirectErrorStream(true)
              .redirectOutput(out.toFile());
      pb.environment().put("ETCD_VERSION", version);
      Process demo = pb.start();
      boolean finished = demo.waitFor(4, TimeUnit.MINUTES);
      if (!finished) {
        demo.destroy();
        demo.waitFor(20, TimeUnit.SECONDS);
      }
      String text = Files.readString(out, StandardCharsets.UTF_8);
      System.out.println(text);
      assertThat(finished).as("demo finished within 4 minutes").isTrue();
      assertThat(demo.exitValue()).as("demo exit status").isZero();
      assertThat(text)
          .contains("all three voters ready")
          .contains("joined-as-learner")
          .contains("ETCD_INITIAL_CLUSTER_STATE='existing'")
          .contains("before its etcd runs: state NotStarted")
          .contains("m3: state=Learner")
          .contains("[-]voter failed: not a started voting member: Learner")
          .contains("m3 was promoted by its own agent")
          .contains("\"result\":\"promoted\"")
          .contains("etcd_member_agent_is_voter 1.0")
          .contains("demo finished");
      // the chart's defaults: etcd in TLS with client certificates, the agent's port in HTTPS
      assertThat(text)
          .as("the learner's peer URL in join's env file, and the peer-TLS check")
          .contains("ETCD_INITIAL_ADVERTISE_PEER_URLS='https://127.0.0.1:")
          .contains("[+]peer-tls ok")
          .contains("etcd_member_agent_peer_tls_ok 1.0")
          .as("/metrics without a client certificate of the CA")
          .contains("without a client certificate, /metrics answers HTTP 401")
          .contains("etcd Version: " + EtcdBinaries.patchVersion(version));
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
