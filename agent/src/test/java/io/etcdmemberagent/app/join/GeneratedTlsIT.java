package io.etcdmemberagent.app.join;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.config.GeneratedTlsSettings;
import io.etcdmemberagent.kube.ClientJavaPodApi;
import io.etcdmemberagent.kube.ClientJavaSecretApi;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.Poll;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.tls.ClusterCa;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's generated TLS against the real API server and real etcd: three members whose {@code
 * join} starts together, as the chart's Pods do, under a ServiceAccount holding exactly the chart's
 * Secret permissions. One CA results (create-only: the losers use the winner's), the three etcd
 * members form a cluster over mutual TLS on both ports, and an application reads it with the
 * certificate of the client Secret. Then the documented CA rotation, one member restart at a time
 * (each restart issues anew, as a Pod start does), with a writer running throughout: the cluster
 * keeps its quorum and ends with every certificate from the new CA.
 */
class GeneratedTlsIT {

  static final String NS = "generated-tls";
  static final String CA_SECRET = "etcd-ca";
  static final String CLIENT_SECRET = "etcd-client-tls";

  @TempDir Path dir;

  private final int[] clientPorts = {FreePorts.next(), FreePorts.next(), FreePorts.next()};
  private final int[] peerPorts = {FreePorts.next(), FreePorts.next(), FreePorts.next()};
  private final Process[] members = new Process[3];
  private KubeControlPlane kube;
  private Path kubeconfig;
  private String initialCluster;

  @Test
  void membersStartingTogetherShareOneCaAndARotationKeepsTheClusterServing() throws Exception {
    kube = KubeControlPlane.shared();
    kube.createNamespace(NS);
    kubeconfig = joinIdentity();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    AtomicBoolean writing = new AtomicBoolean(true);
    try {
      List<Future<?>> issued = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        int m = i;
        issued.add(pool.submit(() -> issue(m)));
      }
      for (Future<?> f : issued) {
        f.get();
      }
      String ca = Files.readString(tls(0).resolve("peer/ca.crt"));
      assertThat(Files.readString(tls(1).resolve("peer/ca.crt")))
          .as("the members that lost the race use the winner's CA")
          .isEqualTo(ca)
          .isEqualTo(Files.readString(tls(2).resolve("peer/ca.crt")))
          .isEqualTo(secret(CA_SECRET).get("ca.crt"));
      assertThat(Files.exists(tls(0).resolve("peer-public/tls.key"))).isFalse();
      X509Certificate peer = cert(Files.readString(tls(0).resolve("peer/tls.crt")));
      assertThat(peer.getSubjectAlternativeNames())
          .extracting(n -> (Object) n.get(1))
          .as("an IP host is an IP address of the certificate")
          .containsExactly("127.0.0.1");

      initialCluster =
          String.join(",", List.of(0, 1, 2).stream().map(i -> "m" + i + "=" + peerUrl(i)).toList());
      for (int i = 0; i < 3; i++) {
        members[i] = start(i, initialCluster, "new");
      }
      AtomicReference<EtcdTestClient> app = new AtomicReference<>(applicationClient());
      awaitHealthy(app.get());
      app.get().put(clientUrl(0), "k", "v".getBytes(StandardCharsets.UTF_8));
      try (EtcdTestClient noCertificate =
          EtcdTestClient.withTrustOnly(write("trust.crt", ca), null)) {
        assertThat(reaches(noCertificate, clientUrl(0)))
            .as("a client without a certificate is refused")
            .isFalse();
      }

      // the writer an application would be: every 50 ms, to the members in turn
      AtomicInteger written = new AtomicInteger();
      AtomicInteger failed = new AtomicInteger();
      Future<?> writer =
          pool.submit(
              () -> {
                int n = 0;
                while (writing.get()) {
                  try {
                    app.get().put(clientUrl(n % 3), "w" + n, new byte[] {1}, 2000);
                    written.incrementAndGet();
                  } catch (RuntimeException e) {
                    failed.incrementAndGet();
                  }
                  n++;
                  java.util.concurrent.locks.LockSupport.parkNanos(
                      50_000_000L); // pacing, not waiting
                }
              });

      ClusterCa oldCa = ClusterCa.parse(ca, secret(CA_SECRET).get("ca.key"), CA_SECRET);
      ClusterCa newCa = ClusterCa.create("rotated", Duration.ofDays(3650));
      String clientBefore = secret(CLIENT_SECRET).get("tls.crt");

      // 1: trust both, sign with the old
      replaceCa(oldCa.signerPem() + newCa.signerPem(), oldCa.keyPem());
      restartEachMember(app, written);
      assertThat(secret(CLIENT_SECRET).get("ca.crt"))
          .as("applications learn to trust the new CA before any member serves from it")
          .isEqualTo(oldCa.signerPem() + newCa.signerPem());
      assertThat(oldCa.signed(secret(CLIENT_SECRET).get("tls.crt"))).isTrue();

      // 2: sign with the new, still trust the old
      replaceCa(newCa.signerPem() + oldCa.signerPem(), newCa.keyPem());
      restartEachMember(app, written);
      assertThat(newCa.signed(secret(CLIENT_SECRET).get("tls.crt")))
          .as("the applications' certificate is issued from the new CA")
          .isTrue();
      assertThat(secret(CLIENT_SECRET).get("tls.crt")).isNotEqualTo(clientBefore);

      // 3: drop the old
      replaceCa(newCa.signerPem(), newCa.keyPem());
      restartEachMember(app, written);
      for (int i = 0; i < 3; i++) {
        for (String part : List.of("peer", "server", "client")) {
          assertThat(newCa.signed(Files.readString(tls(i).resolve(part + "/tls.crt"))))
              .as("m%d's %s certificate", i, part)
              .isTrue();
          assertThat(Files.readString(tls(i).resolve(part + "/ca.crt")))
              .isEqualTo(newCa.signerPem());
        }
      }
      writing.set(false);
      writer.get();
      assertThat(app.get().members(clientUrl(0))).hasSize(3);
      assertThat(app.get().value(clientUrl(2), "k", 2000)).isEqualTo("v");
      System.out.printf(
          "[generated-tls] rotation with 9 member restarts: %d writes, %d failed%n",
          written.get(), failed.get());
      assertThat(written.get()).isPositive();
    } finally {
      writing.set(false);
      pool.shutdownNow();
      for (Process p : members) {
        if (p != null) {
          Processes.kill(p);
        }
      }
    }
  }

  /**
   * One member at a time, as a rolling restart does: stop it, issue its certificates again (a Pod
   * start), start it from its data, and wait until every member answers and writes go on.
   */
  private void restartEachMember(AtomicReference<EtcdTestClient> app, AtomicInteger written)
      throws Exception {
    for (int i = 2; i >= 0; i--) {
      Processes.kill(members[i]);
      issue(i);
      members[i] = start(i, initialCluster, "existing");
      EtcdTestClient fresh = applicationClient();
      EtcdTestClient old = app.getAndSet(fresh);
      old.close();
      awaitHealthy(fresh);
      int before = written.get();
      Poll.until(
          "writes go on after m" + i + "'s restart",
          Duration.ofSeconds(30),
          () -> written.get() > before + 3);
    }
  }

  /**
   * Every member answers over TLS, follows one leader, and serves a linearizable read (which goes
   * through the leader over the peer port): a member its peers refuse would have none.
   */
  private void awaitHealthy(EtcdTestClient client) {
    Poll.until(
        "3 members answering over TLS with one leader",
        Duration.ofSeconds(30),
        () -> {
          java.util.Set<Long> leaders = new java.util.HashSet<>();
          for (int i = 0; i < 3; i++) {
            try {
              leaders.add(client.status(clientUrl(i), 2000).getLeader());
              client.get(clientUrl(i), "k", 2000);
            } catch (RuntimeException e) {
              client.forget(clientUrl(i));
              return false;
            }
          }
          return leaders.size() == 1 && !leaders.contains(0L);
        });
  }

  private static boolean reaches(EtcdTestClient client, String endpoint) {
    try {
      client.status(endpoint, 2000);
      return true;
    } catch (RuntimeException e) {
      client.forget(endpoint);
      return false;
    }
  }

  private void issue(int i) {
    GeneratedTlsSettings settings =
        new GeneratedTlsSettings(
            tls(i), CA_SECRET, Optional.of(CLIENT_SECRET), List.of(), Duration.ofDays(365));
    try (ClientJavaPodApi pods =
        ClientJavaPodApi.connect(
            Optional.of(kubeconfig), NS, "m" + i, "etcd-member-agent.io", Duration.ofSeconds(5))) {
      Files.createDirectories(tls(i));
      new GeneratedTls(settings, new ClientJavaSecretApi(pods), Map.of("test", "generated-tls"))
          .issue("m" + i, List.of(peerUrl(i)), List.of(clientUrl(i)));
    } catch (Exception e) {
      throw new IllegalStateException("m" + i + " could not issue its certificates", e);
    }
  }

  /** A ServiceAccount with the chart's Secret rules only, as join runs. */
  private Path joinIdentity() throws IOException {
    kube.kubectl("create", "serviceaccount", "join", "-n", NS);
    kube.admin()
        .post(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/" + NS + "/roles",
            """
            {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"join"},
             "rules":[
               {"apiGroups":[""],"resources":["secrets"],"resourceNames":["%s","%s"],"verbs":["get"]},
               {"apiGroups":[""],"resources":["secrets"],"resourceNames":["%s"],"verbs":["update"]},
               {"apiGroups":[""],"resources":["secrets"],"verbs":["create"]}]}
            """
                .formatted(CA_SECRET, CLIENT_SECRET, CLIENT_SECRET));
    kube.kubectl(
        "create",
        "rolebinding",
        "join",
        "-n",
        NS,
        "--role=join",
        "--serviceaccount=" + NS + ":join");
    Path token = write("join.token", kube.token(NS, "join", Duration.ofMinutes(30), null));
    return kube.tokenKubeconfig(dir.resolve("join.kubeconfig"), kube.url(), token);
  }

  /** The operator's edit of the CA Secret (a rotation step). */
  private void replaceCa(String bundle, String key) throws IOException {
    // replaced in place: a Secret deleted even for a moment could be created anew by a join
    String yaml =
        kube.kubectl(
            "create",
            "secret",
            "generic",
            CA_SECRET,
            "-n",
            NS,
            "--from-file=ca.crt=" + write("rotate-ca.crt", bundle),
            "--from-file=ca.key=" + write("rotate-ca.key", key),
            "--dry-run=client",
            "-o",
            "yaml");
    kube.kubectl("replace", "-f", write("rotate-ca.yaml", yaml).toString());
  }

  private Map<String, String> secret(String name) {
    var data =
        kube.admin()
            .get("/api/v1/namespaces/" + NS + "/secrets/" + name)
            .json()
            .getAsJsonObject("data");
    Map<String, String> decoded = new java.util.TreeMap<>();
    data.keySet()
        .forEach(
            k ->
                decoded.put(
                    k,
                    new String(
                        Base64.getDecoder().decode(data.get(k).getAsString()),
                        StandardCharsets.UTF_8)));
    return decoded;
  }

  /** An application's client, from the client Secret as it is now. */
  private EtcdTestClient applicationClient() throws IOException {
    Map<String, String> s = secret(CLIENT_SECRET);
    long n = System.nanoTime();
    return EtcdTestClient.withTls(
        write("app-ca-" + n, s.get("ca.crt")),
        write("app-crt-" + n, s.get("tls.crt")),
        write("app-key-" + n, s.get("tls.key")));
  }

  private Process start(int i, String initial, String state) {
    Path t = tls(i);
    List<String> args =
        new ArrayList<>(
            List.of(
                EtcdBinaries.etcd(EtcdBinaries.PRIMARY).toString(),
                "--name=m" + i,
                "--data-dir=" + dir.resolve("m" + i + ".etcd"),
                "--listen-client-urls=" + clientUrl(i),
                "--advertise-client-urls=" + clientUrl(i),
                "--listen-peer-urls=" + peerUrl(i),
                "--initial-advertise-peer-urls=" + peerUrl(i),
                "--initial-cluster-state=" + state,
                "--cert-file=" + t.resolve("server/tls.crt"),
                "--key-file=" + t.resolve("server/tls.key"),
                "--trusted-ca-file=" + t.resolve("server/ca.crt"),
                "--client-cert-auth",
                "--peer-cert-file=" + t.resolve("peer/tls.crt"),
                "--peer-key-file=" + t.resolve("peer/tls.key"),
                "--peer-trusted-ca-file=" + t.resolve("peer/ca.crt"),
                "--peer-client-cert-auth",
                "--logger=zap"));
    args.add("--initial-cluster=" + initial);
    try {
      return new ProcessBuilder(args)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("m" + i + ".log").toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Path tls(int i) {
    return dir.resolve("m" + i + "-tls");
  }

  private String clientUrl(int i) {
    return "https://127.0.0.1:" + clientPorts[i];
  }

  private String peerUrl(int i) {
    return "https://127.0.0.1:" + peerPorts[i];
  }

  private Path write(String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text);
  }

  private static X509Certificate cert(String pem) throws Exception {
    return (X509Certificate)
        CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
  }
}
