package io.etcdmemberagent.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import io.etcdmemberagent.kube.FakeKubeApi;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import io.etcdmemberagent.testing.Poll;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one Kubernetes fault a real API server does not give on demand: 429 with Retry-After (and a
 * 500 beside it), from the stand-in, whose patch semantics {@code PodStatusDifferentialIT} keeps
 * equal to the real server's.
 */
class KubeThrottlingIT {

  static final String NS = "etcd";
  final FakeKubeApi api = new FakeKubeApi();
  @TempDir Path dir;

  @AfterEach
  void close() {
    api.close();
  }

  private boolean readyIs(String status) {
    for (JsonElement e : api.conditions(NS, "etcd-0")) {
      var c = e.getAsJsonObject();
      if (c.get("type").getAsString().equals("etcd-member-agent.io/ready")) {
        return c.get("status").getAsString().equals(status);
      }
    }
    return false;
  }

  @Test
  void retryAfterIsHonouredAndA500LosesNothing() {
    api.createPod(NS, "etcd-0");
    try (EtcdCluster cluster = EtcdCluster.start(EtcdBinaries.primary(), 3);
        InProcessAgent agent =
            InProcessAgent.start(
                "--etcd-endpoint=" + cluster.member(0).clientUrl(),
                "--poll-interval=500ms",
                "--etcd-timeout=1s",
                "--kube=on",
                "--kubeconfig=" + api.writeKubeconfig(dir),
                "--pod-name=etcd-0",
                "--pod-namespace=" + NS,
                "--kube-timeout=1s",
                // the stand-in serves no EtcdMember: only the Pod writer meets the faults
                "--member-resource=off")) {
      Poll.until("ready True on the Pod", Duration.ofSeconds(30), () -> readyIs("True"));

      api.addFault(new FakeKubeApi.Fault(500, 0, Duration.ZERO));
      api.addFault(new FakeKubeApi.Fault(429, 2, Duration.ZERO));
      cluster.member(0).kill();
      Poll.until(
          "ready False after a 500 and a 429", Duration.ofSeconds(30), () -> readyIs("False"));
      List<FakeKubeApi.Request> all = api.requests();
      FakeKubeApi.Request throttled =
          all.stream().filter(r -> r.status() == 429).findFirst().orElseThrow();
      FakeKubeApi.Request next =
          all.stream()
              .filter(r -> r.atNanos() > throttled.atNanos() && !r.delayed())
              .findFirst()
              .orElseThrow();
      assertThat(Duration.ofNanos(next.atNanos() - throttled.atNanos()))
          .as("the next call comes after Retry-After: 2")
          .isGreaterThanOrEqualTo(Duration.ofSeconds(2));
      // The faults hit whichever calls came first after the kill: patches, events or both.
      java.util.regex.Matcher retries =
          java.util.regex.Pattern.compile(
                  "(?m)^etcd_member_agent_kube_(?:patches|events)_total\\{result=\"retry\"\\} (\\d+)\\.0$")
              .matcher(agent.get("/metrics").body());
      int retried = 0;
      while (retries.find()) {
        retried += Integer.parseInt(retries.group(1));
      }
      assertThat(retried).as("the 500 and the 429, each retried once").isEqualTo(2);
    }
  }
}
