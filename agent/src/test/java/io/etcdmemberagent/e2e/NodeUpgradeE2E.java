package io.etcdmemberagent.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.etcdmemberagent.testing.ChartRelease;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.KubeNode;
import io.etcdmemberagent.testing.Poll;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd upgraded as a chart user does it, one minor version at a time, on the real node: {@code helm
 * upgrade --set etcd.image.tag=...} from 3.5 to 3.6 to 3.7 (the images made from the versions the
 * project builds or fetches). Each upgrade rolls the StatefulSet one Pod at a time through the
 * agent's readiness gate; every member then runs the new version, the members are the same, and the
 * data written on 3.5 is read on 3.7.
 *
 * <p>Before the next minor version, every EtcdMember must report the new storage version, and every
 * member must have taken a snapshot since: etcd 3.7 cannot replay the entries 3.5 wrote to the WAL
 * and panics ("unmarshal should never fail"; measured here on a member with no snapshot since 3.5).
 * A cluster in use snapshots every {@code snapshot-count} entries (10,000 by default); this quiet
 * one is given {@code snapshot-count: 100} and writes past it after each upgrade.
 */
class NodeUpgradeE2E {

  static final String NS = "upgrades";

  final EtcdTestClient client = new EtcdTestClient();

  @TempDir Path dir;

  @Test
  void etcdUpgradesOneMinorVersionAtATimeThroughTheChart() throws Exception {
    assumeTrue(KubeNode.available(), "the node needs root");
    KubeNode node = KubeNode.shared();
    ChartRelease db = new ChartRelease(node, "ledger", NS, client);
    try {
      db.createRestrictedNamespace();
      db.install(
          "etcd.image.tag=" + tag("3.5"),
          "etcd.config.snapshot-count=100",
          ChartRelease.QUICK_BOOTSTRAP);
      db.awaitReadyVoters(3, Duration.ofMinutes(5));
      assertThat(versions(db)).containsExactly(EtcdBinaries.patchVersion("3.5"));
      ChartAlerts.assertNoAlertOnTheSettledInstall(
          db, node, dir, "etcd's TLS switched off on purpose (plain peers and clients)");
      var switched =
          node.tool(
              "helm",
              600,
              db.helmArgs(
                  "upgrade",
                  "etcd.image.tag=" + tag("3.5"),
                  "tls.peer.enabled=true",
                  "tls.client.enabled=true"));
      assertThat(switched.exitCode())
          .as("an upgrade that would switch the stored peer URLs to https")
          .isNotZero();
      assertThat(switched.output())
          .contains("tls.peer.enabled=true would change this release's peer URLs");
      Map<String, Long> ids = db.memberIds();
      String url = db.clientUrl(db.podIps().values().iterator().next());
      client.put(url, "ledger/written-on", "3.5".getBytes(StandardCharsets.UTF_8));

      for (String line : new String[] {"3.6", "3.7"}) {
        long started = System.nanoTime();
        db.upgrade("etcd.image.tag=" + tag(line), "etcd.config.snapshot-count=100");
        String want = EtcdBinaries.patchVersion(line);
        Poll.until(
            "every member on " + want + " and Ready",
            Duration.ofMinutes(8),
            () -> versions(db).equals(Set.of(want)) && db.readyPods().size() == 3);
        db.awaitReadyVoters(3, Duration.ofMinutes(2));
        System.out.printf(
            "[node] helm upgrade to etcd %s rolled 3 members in %.1f s%n",
            want, (System.nanoTime() - started) / 1e9);
        assertThat(db.memberIds()).as("an upgrade keeps the members").isEqualTo(ids);
        Poll.until(
            "every EtcdMember's storage version on " + line,
            Duration.ofMinutes(2),
            () ->
                db.etcdMembers().values().stream()
                    .allMatch(
                        m ->
                            m.getAsJsonObject("status").has("storageVersion")
                                && m.getAsJsonObject("status")
                                    .get("storageVersion")
                                    .getAsString()
                                    .startsWith(line + ".")));
        String writer = db.clientUrl(db.podIps().values().iterator().next());
        // the same keys again when etcd answers "request timed out" (a proposal that outlived
        // its deadline on this 2-core machine just after the roll, seen once): a client retries it
        Poll.until(
            "300 keys written on " + line,
            Duration.ofMinutes(1),
            () -> {
              try {
                client.load(writer, "ledger/after-" + line + "/", 300, 64);
                return true;
              } catch (IllegalStateException e) {
                System.out.println("[node] load on " + line + " retried: " + e.getCause());
                return false;
              }
            });
      }
      String now = db.clientUrl(db.podIps().values().iterator().next());
      assertThat(client.value(now, "ledger/written-on", 5000))
          .as("data written on 3.5, read on 3.7")
          .isEqualTo("3.5");
      db.uninstall();
    } finally {
      // the namespace goes too: a later test may use the same name, and kept volumes hold members
      node.tool("kubectl", 300, "delete", "namespace", NS, "--wait=true", "--ignore-not-found");
      client.close();
    }
  }

  /** The image tag the node holds for an etcd line (values-node.yaml lists them). */
  private static String tag(String line) {
    return "v" + EtcdBinaries.patchVersion(line);
  }

  /** The versions the members' Status reports. */
  private Set<String> versions(ChartRelease db) {
    Set<String> versions = new TreeSet<>();
    for (String ip : db.podIps().values()) {
      versions.add(client.status(db.clientUrl(ip), 2000).getVersion());
    }
    return versions;
  }
}
