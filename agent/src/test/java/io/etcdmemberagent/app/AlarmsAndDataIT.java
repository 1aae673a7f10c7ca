package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/** A real NOSPACE alarm and a real corrupt backend file under etcd 3.5. */
@ParameterizedClass(name = "etcd {0}")
@MethodSource("io.etcdmemberagent.testing.EtcdBinaries#versions")
class AlarmsAndDataIT {

  @Parameter String version;

  @TempDir Path dir;

  @Test
  void aRealNospaceAlarmShowsInAlarmsClearAndMetricsAndGatesOnlyWhenConfigured() {
    String endpoint = "http://127.0.0.1:" + FreePorts.next();
    Process etcd =
        SingleEtcd.start(
            version,
            "full0",
            dir.resolve("full0.etcd"),
            endpoint,
            dir.resolve("etcd.log"),
            "--quota-backend-bytes=2097152");
    try (EtcdTestClient client = new EtcdTestClient();
        InProcessAgent lenient =
            InProcessAgent.start("--etcd-endpoint=" + endpoint, "--poll-interval=300ms");
        InProcessAgent strict =
            InProcessAgent.start(
                "--etcd-endpoint=" + endpoint,
                "--poll-interval=300ms",
                "--nospace-fails-readiness=true");
        // no --quota-backend-bytes: from 3.6 the quota comes from etcd's own Status
        InProcessAgent disk =
            InProcessAgent.start(
                "--etcd-endpoint=" + endpoint,
                "--poll-interval=300ms",
                "--data-dir=" + dir.resolve("full0.etcd"),
                "--disk-gates-readiness=false")) {
      Poll.until("ready", Duration.ofSeconds(30), () -> strict.get("/readyz").status() == 200);
      int puts = client.fillUntilNoSpace(endpoint, "k");
      System.out.printf("NOSPACE after %d puts of 64 KiB into a 2 MiB quota%n", puts);

      Poll.until(
          "NOSPACE gates the strict agent",
          Duration.ofSeconds(10),
          () -> strict.get("/readyz/alarms").body().contains("[-]alarms failed"));
      assertThat(strict.get("/readyz").status()).isEqualTo(503);
      for (InProcessAgent agent : new InProcessAgent[] {lenient, strict}) {
        Poll.until(
            "alarms-clear False with reason NoSpace",
            Duration.ofSeconds(10),
            () ->
                agent
                    .get("/status")
                    .body()
                    .contains(
                        "{\"name\":\"alarms-clear\",\"status\":\"False\",\"reason\":\"NoSpace\""));
        assertThat(agent.get("/status").body()).contains("\"type\":\"NOSPACE\"");
        assertThat(agent.get("/metrics").body())
            .contains("etcd_member_agent_alarm{type=\"NOSPACE\"} 1.0")
            .contains("etcd_member_agent_alarm{type=\"CORRUPT\"} 0.0");
      }
      assertThat(lenient.get("/readyz").status())
          .as("reads still work: NOSPACE does not gate by default")
          .isEqualTo(200);
      assertThat(lenient.get("/livez").status()).isEqualTo(200);
      boolean reportsQuota = !version.equals("3.5");
      String diskCondition =
          reportsQuota
              ? "{\"name\":\"disk-healthy\",\"status\":\"False\",\"reason\":\"QuotaNearlyFull\""
              : "{\"name\":\"disk-healthy\",\"status\":\"True\"";
      Poll.until(
          reportsQuota
              ? "the disk check judging etcd's own 2 MiB quota"
              : "the disk check judging the default 2 GiB (3.5 does not report its quota)",
          Duration.ofSeconds(10),
          () -> disk.get("/status").body().contains(diskCondition));
    } finally {
      Processes.kill(etcd);
    }
  }

  /**
   * etcd started in a loop (as the kubelet would) on a db file whose meta pages are destroyed: it
   * panics every time. The agent keeps running, says why, posts events, and leaves the file alone.
   */
  @Test
  void aCorruptDbFileIsReportedWhileEtcdCrashLoopsAndIsNeverTouched() throws Exception {
    String endpoint = "http://127.0.0.1:" + FreePorts.next();
    Path data = dir.resolve("c0.etcd");
    String[] args = {"c0", data.toString(), endpoint};
    Process first = SingleEtcd.start(version, args[0], data, endpoint, dir.resolve("c0-first.log"));
    try (EtcdTestClient client = new EtcdTestClient()) {
      Poll.until("etcd serves", Duration.ofSeconds(30), () -> puts(client, endpoint));
    } finally {
      Processes.kill(first);
    }
    Path db = data.resolve("member").resolve("snap").resolve("db");
    try (InProcessAgent before =
        InProcessAgent.start(
            "--etcd-endpoint=" + endpoint, "--data-dir=" + data, "--poll-interval=300ms")) {
      Poll.until(
          "a valid db file seen",
          Duration.ofSeconds(10),
          () -> before.get("/status").body().contains("\"dbFile\":\"Valid\""));
    }
    corruptMetaPages(db);
    String hash = sha256(db);

    AtomicBoolean looping = new AtomicBoolean(true);
    AtomicInteger starts = new AtomicInteger();
    AtomicReference<Process> current = new AtomicReference<>();
    Thread kubelet =
        new Thread(
            () -> {
              while (looping.get()) {
                Process p =
                    SingleEtcd.start(
                        version,
                        args[0],
                        data,
                        endpoint,
                        dir.resolve("c0-" + starts.incrementAndGet() + ".log"));
                current.set(p);
                try {
                  p.waitFor();
                  Thread.sleep(200); // the kubelet's restart back-off, shortened
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "crash-loop");
    kubelet.start();
    try (KubeControlPlane kube = KubeControlPlane.start(dir.resolve("kube"))) {
      KubePods pods = new KubePods(kube, "etcd", "etcd").withChartRbac(dir);
      List<String> flags =
          new ArrayList<>(
              List.of(
                  "--etcd-endpoint=" + endpoint,
                  "--data-dir=" + data,
                  "--poll-interval=300ms",
                  "--etcd-timeout=1s",
                  "--down-event-after=2s",
                  "--kube-timeout=1s"));
      flags.addAll(pods.agentFlagsFor("etcd-0", dir));
      try (InProcessAgent agent = InProcessAgent.start(flags.toArray(String[]::new))) {
        Poll.until(
            "serving names the corrupt db",
            Duration.ofSeconds(20),
            () -> agent.get("/readyz/serving").body().contains("member/snap/db is corrupt"));
        assertThat(agent.get("/status").body())
            .contains(
                "{\"name\":\"ready\",\"status\":\"False\",\"reason\":\"CorruptDatabase\"",
                "{\"name\":\"disk-healthy\",\"status\":\"False\",\"reason\":\"CorruptDatabase\"",
                "\"dbFile\":\"Corrupt\"");
        assertThat(agent.get("/metrics").body())
            .contains(
                "etcd_member_agent_db_file_corrupt 1.0", "etcd_member_agent_local_member_up 0.0");
        Poll.until(
            "ready False with reason CorruptDatabase at the API",
            Duration.ofSeconds(10),
            () -> pods.conditions("etcd-0").toString().contains("CorruptDatabase"));
        Poll.until(
            "LocalMemberDown and DiskUnhealthy events",
            Duration.ofSeconds(15),
            () ->
                pods.eventReasons()
                    .containsAll(java.util.List.of("LocalMemberDown", "DiskUnhealthy")));
        Poll.until(
            "etcd restarted at least twice", Duration.ofSeconds(20), () -> starts.get() >= 3);
        assertThat(agent.get("/livez").status()).isEqualTo(200);
      }
    } finally {
      looping.set(false);
      kubelet.interrupt();
      kubelet.join(5000);
      Processes.kill(current.get());
    }
    assertThat(sha256(db)).as("the agent never writes the db file").isEqualTo(hash);
    assertThat(Files.readString(dir.resolve("c0-1.log"))).contains("panic");
  }

  private static boolean puts(EtcdTestClient client, String endpoint) {
    try {
      for (int i = 0; i < 20; i++) {
        client.put(endpoint, "key-" + i, ("value-" + i).getBytes());
      }
      return true;
    } catch (StatusRuntimeException e) {
      return false;
    }
  }

  /** Overwrites the magic of both bbolt meta pages (pages 0 and 1 of 4 KiB). */
  private static void corruptMetaPages(Path db) throws IOException {
    try (FileChannel ch = FileChannel.open(db, StandardOpenOption.WRITE)) {
      for (long page : new long[] {0, 4096}) {
        ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}), page + 16);
      }
      ch.force(true);
    }
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
