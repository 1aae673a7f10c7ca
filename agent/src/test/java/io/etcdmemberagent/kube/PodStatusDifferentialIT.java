package io.etcdmemberagent.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.core.publish.ConditionEntry;
import io.etcdmemberagent.core.publish.ConditionStatus;
import io.etcdmemberagent.core.publish.PodApi;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps {@link FakeKubeApi} honest: one sequence of the agent's own patches (through its adapter)
 * sent to the stand-in and to a real kube-apiserver, Pods that start with the same foreign
 * conditions; after every step the stored conditions (fields, values and order) and the adapter's
 * answers must be the same on both.
 */
class PodStatusDifferentialIT {

  static final String NS = "differential";
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final Instant T1 = Instant.parse("2026-01-01T00:05:00Z");

  @TempDir Path dir;

  @Test
  void theStandInStoresWhatTheRealApiServerStores() throws Exception {
    try (KubeControlPlane kube = KubeControlPlane.start(dir.resolve("kube"));
        FakeKubeApi fake = new FakeKubeApi()) {
      KubePods pods = new KubePods(kube, NS, "etcd").withChartRbac(dir);
      String realUid = pods.createPod("etcd-0");
      pods.seedForeignConditions("etcd-0");
      String fakeUid = fake.createPod(NS, "etcd-0");
      fake.setConditions(NS, "etcd-0", pods.conditions("etcd-0"));

      Path token = pods.tokenFile(dir.resolve("token"), KubePods.boundTo("Pod", "etcd-0", realUid));
      Path realConfig = kube.tokenKubeconfig(dir.resolve("real.kubeconfig"), kube.url(), token);
      Path fakeDir = Files.createDirectories(dir.resolve("fake"));
      try (PodApi real = connect(realConfig);
          PodApi standIn = connect(fake.writeKubeconfig(fakeDir))) {
        List<List<ConditionEntry>> steps =
            List.of(
                all(ConditionStatus.FALSE, "Starting", T0),
                List.of(
                    entry("ready", ConditionStatus.TRUE, "Ready", T1),
                    entry("voting-member", ConditionStatus.TRUE, "Voter", T1)),
                List.of(entry("in-sync", ConditionStatus.UNKNOWN, "Unknown", T1)),
                all(ConditionStatus.TRUE, "Fine", T1));
        int step = 0;
        for (List<ConditionEntry> entries : steps) {
          step++;
          KubeAnswer a = real.patchConditions(realUid, 1, entries);
          KubeAnswer b = standIn.patchConditions(fakeUid, 1, entries);
          assertThat(b).as("step %d answer", step).isEqualTo(a);
          assertThat(normalized(fake.conditions(NS, "etcd-0")))
              .as("step %d stored conditions", step)
              .isEqualTo(normalized(pods.conditions("etcd-0")));
          assertThat(standIn.read().ours())
              .as("step %d read back", step)
              .isEqualTo(real.read().ours());
        }

        // A patch meant for a Pod that was replaced (another UID): the same refusal on both.
        KubeAnswer a =
            real.patchConditions("00000000-0000-0000-0000-000000000000", 1, steps.get(0));
        KubeAnswer b =
            standIn.patchConditions("00000000-0000-0000-0000-000000000000", 1, steps.get(0));
        assertThat(a).isInstanceOf(KubeAnswer.Conflict.class);
        assertThat(b).isInstanceOf(KubeAnswer.Conflict.class);
        assertThat(((KubeAnswer.Conflict) b).message())
            .isEqualTo(((KubeAnswer.Conflict) a).message());
        assertThat(normalized(fake.conditions(NS, "etcd-0")))
            .isEqualTo(normalized(pods.conditions("etcd-0")));
      }
    }
  }

  private static PodApi connect(Path kubeconfig) throws Exception {
    return ClientJavaPodApi.connect(
        Optional.of(kubeconfig), NS, "etcd-0", "etcd-member-agent.io", Duration.ofSeconds(5));
  }

  private static List<ConditionEntry> all(ConditionStatus status, String reason, Instant at) {
    List<ConditionEntry> out = new ArrayList<>();
    for (String name :
        List.of("ready", "voting-member", "in-sync", "alarms-clear", "peer-tls", "disk-healthy")) {
      out.add(entry(name, status, reason, at));
    }
    return out;
  }

  private static ConditionEntry entry(
      String name, ConditionStatus status, String reason, Instant at) {
    return new ConditionEntry(name, status, reason, "message of " + name + ": " + reason, at);
  }

  /** Each condition's fields in a fixed order, the list in the server's order. */
  private static List<String> normalized(JsonArray conditions) {
    List<String> out = new ArrayList<>();
    for (JsonElement e : conditions) {
      JsonObject c = e.getAsJsonObject();
      StringBuilder line = new StringBuilder();
      for (String f :
          List.of(
              "type",
              "status",
              "reason",
              "message",
              "lastTransitionTime",
              "lastProbeTime",
              "observedGeneration")) {
        line.append(f).append('=').append(c.has(f) ? c.get(f).toString() : "-").append(' ');
      }
      out.add(line.toString());
    }
    return out;
  }
}
