package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.TestPki;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A three-member cluster with client and peer TLS, both with client-certificate authentication
 * (certificates made in the test), observed by the agent over mutual TLS.
 */
class TlsClusterIT {

  @TempDir Path dir;

  static Stream<String> versions() {
    return EtcdBinaries.versions().stream();
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void aTlsClusterIsObservedOverMutualTlsWithItsPeerTlsValid(String version) {
    TestPki pki = new TestPki(dir, "cluster");
    TestPki.Issued server = pki.issue("member");
    TestPki.Issued client = pki.issue("agent");
    int[] clientPorts = {FreePorts.next(), FreePorts.next(), FreePorts.next()};
    int[] peerPorts = {FreePorts.next(), FreePorts.next(), FreePorts.next()};
    List<String> initial = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      initial.add("m" + i + "=https://127.0.0.1:" + peerPorts[i]);
    }
    List<Process> members = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        members.add(
            start(
                version, i, clientPorts[i], peerPorts[i], String.join(",", initial), pki, server));
      }
      try (InProcessAgent agent =
          InProcessAgent.start(
              "--etcd-endpoint=https://127.0.0.1:" + clientPorts[0],
              "--cacert=" + pki.caCert(),
              "--cert=" + client.cert(),
              "--key=" + client.key(),
              "--peer-cacert=" + pki.caCert(),
              "--poll-interval=300ms",
              "--etcd-timeout=1s")) {
        Poll.until(
            "ready over mTLS", Duration.ofSeconds(60), () -> agent.get("/readyz").status() == 200);
        try {
          Poll.until(
              "peer-tls valid",
              Duration.ofSeconds(20),
              () -> agent.get("/status").body().contains("\"reason\":\"PeerTlsValid\""));
        } catch (AssertionError e) {
          throw new AssertionError(e.getMessage() + ": " + agent.get("/status").body(), e);
        }
        JsonObject status = JsonParser.parseString(agent.get("/status").body()).getAsJsonObject();
        assertThat(status.get("state").getAsString()).isEqualTo("Voter");
        assertThat(status.getAsJsonObject("members").getAsJsonArray("list")).hasSize(3);
        JsonObject url =
            status.getAsJsonObject("peerTls").getAsJsonArray("urls").get(0).getAsJsonObject();
        assertThat(url.get("source").getAsString()).isEqualTo("served");
        assertThat(url.get("trust").getAsString()).isEqualTo("TRUSTED");
        assertThat(url.get("hostMatches").getAsBoolean()).isTrue();
        String metrics = agent.get("/metrics").body();
        assertThat(metrics)
            .containsPattern("cert_expiry_timestamp_seconds\\{cert=\"client\"} 1\\.[0-9]+E9")
            .containsPattern("cert_expiry_timestamp_seconds\\{cert=\"peer\"} 1\\.[0-9]+E9")
            .contains("etcd_member_agent_peer_tls_ok 1.0");
      }
    } finally {
      members.forEach(Processes::kill);
    }
  }

  private Process start(
      String version,
      int i,
      int clientPort,
      int peerPort,
      String initialCluster,
      TestPki pki,
      TestPki.Issued cert) {
    String client = "https://127.0.0.1:" + clientPort;
    String peer = "https://127.0.0.1:" + peerPort;
    List<String> args =
        List.of(
            EtcdBinaries.etcd(version).toString(),
            "--name=m" + i,
            "--data-dir=" + dir.resolve("m" + i + ".etcd"),
            "--listen-client-urls=" + client,
            "--advertise-client-urls=" + client,
            "--listen-peer-urls=" + peer,
            "--initial-advertise-peer-urls=" + peer,
            "--initial-cluster=" + initialCluster,
            "--initial-cluster-state=new",
            "--cert-file=" + cert.cert(),
            "--key-file=" + cert.key(),
            "--client-cert-auth",
            "--trusted-ca-file=" + pki.caCert(),
            "--peer-cert-file=" + cert.cert(),
            "--peer-key-file=" + cert.key(),
            "--peer-client-cert-auth",
            "--peer-trusted-ca-file=" + pki.caCert(),
            "--logger=zap");
    try {
      return new ProcessBuilder(args)
          .redirectErrorStream(true)
          .redirectOutput(dir.resolve("m" + i + ".log").toFile())
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
