package io.etcdmemberagent.bench;

import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.HttpsClients;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.KubePods;
import io.etcdmemberagent.testing.Processes;
import io.etcdmemberagent.testing.SingleEtcd;
import io.etcdmemberagent.testing.TestPki;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * The cost of secure serving, the real jar with the image's JVM and flags beside one etcd: plain
 * HTTP against HTTPS with {@code --authz=kube} on a real kube-apiserver (the chart's way). Start-up
 * to the first {@code /livez}, RSS after a steady window, {@code /readyz} and {@code /metrics}
 * latency with a new connection per request (as kubelet probes and Prometheus' first scrape make
 * them; {@code /metrics} with the authorization cache warm), and {@code /readyz} while 200 bad
 * clients hold connections open (100 that never start the TLS handshake, 100 that send their
 * request one byte every 2 s).
 */
final class SecureServingBench {

  private static final String NS = "bench-secure";

  private final Settings settings;
  private final Path workDir;

  SecureServingBench(Settings settings, Path workDir) {
    this.settings = settings;
    this.workDir = workDir;
  }

  void run(Report report) throws Exception {
    String endpoint = "http://127.0.0.1:" + FreePorts.next();
    Process etcd =
        SingleEtcd.start(
            EtcdBinaries.primary(),
            "sec",
            workDir.resolve("sec.etcd"),
            endpoint,
            workDir.resolve("sec-etcd.log"));
    KubeControlPlane kube = KubeControlPlane.shared();
    KubePods pods = new KubePods(kube, NS, "db").withChartRbac(workDir);
    kube.kubectl(
        "create",
        "clusterrolebinding",
        NS + "-reviews",
        "--clusterrole=system:auth-delegator",
        "--serviceaccount=" + NS + ":db");
    kube.kubectl("create", "serviceaccount", "reader", "-n", NS);
    kube.grantMetricsRead(NS + "-reader", NS + "-reads", NS, "reader");
    String token = kube.token(NS, "reader", Duration.ofHours(1), null);
    TestPki.Issued serving = new TestPki(workDir, "bench-serving").issue("agent");
    try {
      report.section(
          "Secure serving",
          "The real jar with the image's JVM and flags, one etcd 3.6, polling at 1s; plain HTTP"
              + " against HTTPS (ECDSA P-256 serving key) with --authz=kube on a real"
              + " kube-apiserver, as the chart's ServiceAccount. Latencies from the bench JVM with a"
              + " new connection per request (a TLS handshake each, as a kubelet probe makes it),"
              + " sequential; /metrics with a token whose TokenReview and SubjectAccessReview are"
              + " cached. Bad clients: 100 connections that never start the handshake and 100 that"
              + " send a request one byte every 2 s, held open while /readyz is measured.");
      for (int i = 0; i < settings.runs(); i++) {
        measure(endpoint, false, pods, "plain-" + i, serving, token);
        measure(endpoint, true, pods, "secure-" + i, serving, token);
      }
      flushRows(report);
    } finally {
      Processes.kill(etcd);
      kube.kubectl(
          "delete", "clusterrolebinding", NS + "-reviews", NS + "-reads", "--ignore-not-found");
      kube.kubectl("delete", "clusterrole", NS + "-reader", "--ignore-not-found");
    }
  }

  private final Map<String, List<Double>> figures = new java.util.LinkedHashMap<>();

  private void add(String figure, double value) {
    figures.computeIfAbsent(figure, k -> new ArrayList<>()).add(value);
  }

  private void measure(
      String etcdEndpoint,
      boolean secure,
      KubePods pods,
      String pod,
      TestPki.Issued serving,
      String token)
      throws Exception {
    String variant = secure ? "HTTPS, authz=kube" : "plain HTTP";
    int port = FreePorts.next();
    List<String> jvm = new ArrayList<>(List.of(FootprintBench.imageJava(), "-XX:MaxRAM=256m"));
    jvm.addAll(FootprintBench.TUNED);
    List<String> args =
        new ArrayList<>(
            List.of(
                "run",
                "--etcd-endpoint=" + etcdEndpoint,
                "--http-host=127.0.0.1",
                "--http-port=" + port,
                "--remove-surplus-members=false"));
    if (secure) {
      args.addAll(pods.agentFlagsFor(pod, workDir));
      args.add("--https-cert-file=" + serving.cert());
      args.add("--https-key-file=" + serving.key());
      args.add("--authz=kube");
    } else {
      args.add("--kube=off");
    }
    SSLContext any = HttpsClients.anyServer();
    long started = System.nanoTime();
    try (AgentProcess agent =
        AgentProcess.startJar(
            jvm, AgentProcess.jar(), port, Map.of(), args.toArray(String[]::new))) {
      add(
          variant + "|start-up → first /livez 200",
          DetectionBench.millisUntil(
              started, () -> status(secure, any, port, "/livez", null) == 200));
      DetectionBench.millisUntil(
          System.nanoTime(), () -> status(secure, any, port, "/readyz", null) == 200);
      Thread.sleep(Math.min(30_000, settings.steadyWindow().toMillis())); // the steady window
      add(
          variant + "|RSS after the steady window (MiB)",
          ProcessStats.rssMiB(agent.process().pid()));
      int n = settings.mode().equals("full") ? 2000 : 100;
      latencies(variant, "/readyz", n, () -> status(secure, any, port, "/readyz", null));
      String bearer = secure ? token : null;
      status(secure, any, port, "/metrics", bearer); // the authorization answers cached
      latencies(variant, "/metrics", n / 4, () -> status(secure, any, port, "/metrics", bearer));
      if (secure) {
        try (BadClients bad = new BadClients(port, any)) {
          latencies(
              variant + ", 200 bad clients held open",
              "/readyz",
              n,
              () -> status(true, any, port, "/readyz", null));
          add(variant + "|bad clients still held open after the measurement", bad.stillOpen());
        }
      }
    }
  }

  private void latencies(String variant, String path, int n, java.util.function.IntSupplier call) {
    for (int i = 0; i < Math.max(10, n / 10); i++) {
      call.getAsInt(); // warm-up of the client and the server's request path, not counted
    }
    double[] millis = new double[n];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      int status = call.getAsInt();
      millis[i] = status == 200 ? (System.nanoTime() - t0) / 1e6 : Double.NaN;
    }
    Arrays.sort(millis);
    add(variant + "|" + path + " p50 (ms), new connection each", millis[n / 2]);
    add(variant + "|" + path + " p99 (ms), new connection each", millis[(int) (n * 0.99) - 1]);
  }

  private void flushRows(Report report) {
    figures.forEach(
        (key, values) -> {
          String[] parts = key.split("\\|", 2);
          report.row(parts[1], parts[0], Stats.of(values).format(""), "");
        });
  }

  private static int status(boolean secure, SSLContext any, int port, String path, String token) {
    try {
      return secure ? HttpsClients.get(any, port, path, token).status() : plain(port, path);
    } catch (RuntimeException e) {
      return -1;
    }
  }

  /** One plain HTTP request on a connection of its own. */
  private static int plain(int port, String path) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
      s.setSoTimeout(5000);
      OutputStream out = s.getOutputStream();
      out.write(
          ("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      InputStream in = s.getInputStream();
      byte[] head = in.readNBytes(12);
      in.transferTo(OutputStream.nullOutputStream());
      return Integer.parseInt(new String(head, StandardCharsets.US_ASCII).substring(9, 12));
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** 100 silent TCP connections and 100 TLS connections sending a request a byte every 2 s. */
  private static final class BadClients implements AutoCloseable {
    private final List<Socket> silent = new ArrayList<>();
    private final List<SSLSocket> slow = new ArrayList<>();
    private final Thread dripper;
    private volatile boolean done;

    BadClients(int port, SSLContext any) throws IOException {
      for (int i = 0; i < 100; i++) {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        silent.add(s);
        SSLSocket t = (SSLSocket) any.getSocketFactory().createSocket("127.0.0.1", port);
        t.startHandshake();
        slow.add(t);
      }
      byte[] request =
          "GET /readyz HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII);
      dripper =
          new Thread(
              () -> {
                for (int i = 0; !done && i < request.length; i++) {
                  for (SSLSocket t : slow) {
                    try {
                      t.getOutputStream().write(request[i]);
                      t.getOutputStream().flush();
                    } catch (IOException closedByTheServer) {
                      // the server may close a slow client: that is what is being measured
                    }
                  }
                  java.util.concurrent.locks.LockSupport.parkNanos(
                      Duration.ofSeconds(2).toNanos()); // the slow client's own pace
                }
              },
              "slow-clients");
      dripper.setDaemon(true);
      dripper.start();
    }

    /** How many of the 200 the server has not closed. */
    double stillOpen() {
      int open = 0;
      for (Socket s : silent) {
        open += isOpen(s) ? 1 : 0;
      }
      for (SSLSocket s : slow) {
        open += isOpen(s) ? 1 : 0;
      }
      return open;
    }

    private static boolean isOpen(Socket s) {
      try {
        s.setSoTimeout(1);
        s.getInputStream().read();
        return false; // an answer (408, 431) or the end: the server let go of it
      } catch (java.net.SocketTimeoutException stillWaiting) {
        return true;
      } catch (IOException closed) {
        return false;
      }
    }

    @Override
    public void close() {
      done = true;
      dripper.interrupt();
      for (Socket s : silent) {
        closeQuietly(s);
      }
      for (Socket s : slow) {
        closeQuietly(s);
      }
    }

    private static void closeQuietly(Socket s) {
      try {
        s.close();
      } catch (IOException e) {
        // closing a test client
      }
    }
  }
}
