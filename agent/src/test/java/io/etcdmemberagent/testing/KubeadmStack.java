package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * kubeadm's stacked control plane on one machine: every node a network namespace holding etcd
 * (kubeadm's flags and PKI layout, client and peer TLS), a kube-apiserver whose only etcd endpoint
 * is its local member (restarted like the kubelet restarts a static Pod that exits), and the agent
 * as {@code deploy/kubeadm/etcd-member-agent.yaml} runs it; HAProxy in front as kubeadm's HA guide
 * configures it, checking the API server's {@code /readyz} and, when gated, the agent's.
 */
public final class KubeadmStack implements AutoCloseable {

  public static final int AGENT_PORT = 9379;
  public static final String TOKEN = "lb-client-token";
  public static final String CLIENT_USER = "lb-client";

  /** One control-plane node: its name, address and kubeadm-style folder ({@code pki/}, data). */
  public record Node(String name, String ip, Path dir) {
    public Path pki(String file) {
      return dir.resolve("pki").resolve(file);
    }

    public String etcdUrl() {
      return "https://" + ip + ":2379";
    }

    public String peerUrl() {
      return "https://" + ip + ":2380";
    }

    public Path auditLog() {
      return dir.resolve("audit.log");
    }
  }

  private final Path dir;
  private final NodeNetwork network = new NodeNetwork();
  private final TestPki etcdCa;
  private final TestPki kubeCa;
  private final Map<String, Node> nodes = new LinkedHashMap<>();
  private final List<Process> processes = new ArrayList<>();
  private final List<Supervised> apiServers = new ArrayList<>();
  private final List<AgentProcess> agents = new ArrayList<>();
  private final int lbPort = FreePorts.next();
  private final int statsPort = FreePorts.next();
  private Process haproxy;

  public KubeadmStack(Path dir, int nodeCount) {
    this.dir = dir;
    this.etcdCa = new TestPki(mkdirs(dir.resolve("etcd-ca")), "etcd");
    this.kubeCa = new TestPki(mkdirs(dir.resolve("kube-ca")), "kube");
    TestPki.writeKeyPair(dir.resolve("sa.key"), dir.resolve("sa.pub"));
    write(dir.resolve("tokens.csv"), TOKEN + "," + CLIENT_USER + ",lb-client-uid,system:masters\n");
    write(
        dir.resolve("audit-policy.yaml"),
        """
        apiVersion: audit.k8s.io/v1
        kind: Policy
        omitStages: ["RequestReceived"]
        rules:
        - level: Metadata
          users: ["%s"]
        - level: None
        """
            .formatted(CLIENT_USER));
    List<String> ips = new ArrayList<>(List.of("127.0.0.1"));
    for (int i = 1; i <= nodeCount; i++) {
      String name = "node-" + i;
      String ip = network.addPod(name);
      ips.add(ip);
      nodes.put(name, new Node(name, ip, mkdirs(dir.resolve(name))));
    }
    TestPki.Issued apiServing =
        kubeCa.issue(
            "kube-apiserver",
            Instant.now().minus(Duration.ofDays(1)),
            Instant.now().plus(Duration.ofDays(365)),
            List.of("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"),
            ips);
    for (Node node : nodes.values()) {
      kubeadmPki(node, apiServing);
    }
  }

  /** kubeadm's files under {@code /etc/kubernetes/pki}, here under the node's {@code pki/}. */
  private void kubeadmPki(Node node, TestPki.Issued apiServing) {
    Instant from = Instant.now().minus(Duration.ofDays(1));
    Instant to = Instant.now().plus(Duration.ofDays(365));
    List<String> dns = List.of(node.name(), "localhost");
    List<String> ips = List.of(node.ip(), "127.0.0.1");
    mkdirs(node.pki("etcd"));
    copy(etcdCa.caCert(), node.pki("etcd/ca.crt"));
    place(etcdCa.issue(node.name(), from, to, dns, ips), node, "etcd/server");
    place(etcdCa.issue(node.name() + "-peer", from, to, dns, ips), node, "etcd/peer");
    place(etcdCa.issue("kube-etcd-healthcheck-client"), node, "etcd/healthcheck-client");
    place(etcdCa.issue("kube-apiserver-etcd-client"), node, "apiserver-etcd-client");
    place(apiServing, node, "apiserver");
    copy(kubeCa.caCert(), node.pki("ca.crt"));
  }

  private static void place(TestPki.Issued issued, Node node, String base) {
    copy(issued.cert(), node.pki(base + ".crt"));
    copy(issued.key(), node.pki(base + ".key"));
  }

  public Node node(int i) {
    return nodes.get("node-" + i);
  }

  public NodeNetwork network() {
    return network;
  }

  /** A client of the nodes' etcd with kubeadm's healthcheck-client certificate. */
  public EtcdTestClient etcdClient() {
    Node any = node(1);
    return EtcdTestClient.withTls(
        any.pki("etcd/ca.crt"),
        any.pki("etcd/healthcheck-client.crt"),
        any.pki("etcd/healthcheck-client.key"));
  }

  /** {@code name=peerURL,...} of these nodes. */
  public static String initialCluster(List<Node> members) {
    return members.stream().map(n -> n.name() + "=" + n.peerUrl()).collect(Collectors.joining(","));
  }

  /** etcd with the flags kubeadm's static Pod manifest gives it. */
  public void startEtcd(Node node, String initialCluster, String state) {
    String pki = node.pki("etcd").toString();
    List<String> command =
        List.of(
            EtcdBinaries.etcd(EtcdBinaries.primary()).toString(),
            "--name=" + node.name(),
            "--listen-client-urls=https://127.0.0.1:2379," + node.etcdUrl(),
            "--advertise-client-urls=" + node.etcdUrl(),
            "--listen-peer-urls=" + node.peerUrl(),
            "--initial-advertise-peer-urls=" + node.peerUrl(),
            "--data-dir=" + node.dir().resolve("etcd"),
            "--cert-file=" + pki + "/server.crt",
            "--key-file=" + pki + "/server.key",
            "--trusted-ca-file=" + pki + "/ca.crt",
            "--client-cert-auth=true",
            "--peer-cert-file=" + pki + "/peer.crt",
            "--peer-key-file=" + pki + "/peer.key",
            "--peer-trusted-ca-file=" + pki + "/ca.crt",
            "--peer-client-cert-auth=true",
            "--snapshot-count=10000",
            "--listen-metrics-urls=http://127.0.0.1:2381",
            "--feature-gates=InitialCorruptCheck=true",
            "--watch-progress-notify-interval=5s",
            "--initial-cluster=" + initialCluster,
            "--initial-cluster-state=" + state);
    processes.add(start(network.inPod(node.name(), command), node.dir().resolve("etcd.log")));
  }

  /** kube-apiserver as kubeadm runs it: only its local etcd, restarted when it exits. */
  public void startApiServer(Node node) {
    List<String> command =
        List.of(
            KubeBinaries.apiServer().toString(),
            "--advertise-address=" + node.ip(),
            "--secure-port=6443",
            "--etcd-servers=https://127.0.0.1:2379",
            "--etcd-cafile=" + node.pki("etcd/ca.crt"),
            "--etcd-certfile=" + node.pki("apiserver-etcd-client.crt"),
            "--etcd-keyfile=" + node.pki("apiserver-etcd-client.key"),
            "--tls-cert-file=" + node.pki("apiserver.crt"),
            "--tls-private-key-file=" + node.pki("apiserver.key"),
            "--client-ca-file=" + node.pki("ca.crt"),
            "--authorization-mode=Node,RBAC",
            "--token-auth-file=" + dir.resolve("tokens.csv"),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file=" + dir.resolve("sa.pub"),
            "--service-account-signing-key-file=" + dir.resolve("sa.key"),
            "--service-cluster-ip-range=10.96.0.0/12",
            "--allow-privileged=true",
            "--cert-dir=" + node.dir().resolve("apiserver-certs"),
            "--profiling=false",
            "--audit-policy-file=" + dir.resolve("audit-policy.yaml"),
            "--audit-log-path=" + node.auditLog(),
            "--audit-log-format=json");
    Supervised s =
        new Supervised(
            node.name() + " kube-apiserver",
            network.inPod(node.name(), command),
            node.dir().resolve("kube-apiserver.log"));
    apiServers.add(s);
  }

  /** Restarts of node {@code i}'s kube-apiserver so far (it exits while its etcd is a learner). */
  public int apiServerRestarts(Node node) {
    return apiServers.stream()
        .filter(s -> s.name.startsWith(node.name() + " "))
        .mapToInt(s -> s.restarts)
        .sum();
  }

  /** The static Pod manifest the agent runs from on a kubeadm node. */
  public static final Path MANIFEST = Path.of("..", "deploy", "kubeadm", "etcd-member-agent.yaml");

  /**
   * The agent with the args of {@link #MANIFEST}, its host paths moved into the node's folder and
   * its placeholder endpoints replaced by {@code clusterEndpoints}.
   */
  public AgentProcess startAgent(Node node, List<Node> clusterEndpoints) {
    String endpoints =
        clusterEndpoints.stream().map(Node::etcdUrl).collect(Collectors.joining(","));
    List<String> args = new ArrayList<>();
    for (String arg : manifestArgs()) {
      args.add(
          arg.replace("/etc/kubernetes/pki", node.dir().resolve("pki").toString())
              .replace("/var/lib/etcd-member-agent", node.dir().toString())
              .replaceAll("https://CP1_IP.*", endpoints));
    }
    AgentProcess agent =
        AgentProcess.start(
            network.inPod(node.name(), List.of()),
            AGENT_PORT,
            Map.of(),
            args.toArray(String[]::new));
    agents.add(agent);
    return agent;
  }

  /** The container's args in {@link #MANIFEST}. */
  static List<String> manifestArgs() {
    try {
      List<String> args = new ArrayList<>();
      boolean inArgs = false;
      for (String line : Files.readAllLines(MANIFEST)) {
        if (line.trim().equals("args:")) {
          inArgs = true;
        } else if (inArgs && line.startsWith("    - ")) {
          args.add(line.substring("    - ".length()).trim());
        } else if (inArgs) {
          return args;
        }
      }
      return args;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * HAProxy as in kubeadm's HA guide (TCP, round robin, an HTTPS check of the API server's {@code
   * /readyz}); {@code gated}: the same check sequence then asks the agent's {@code /readyz}.
   */
  public void startLoadBalancer(boolean gated) {
    StringBuilder servers = new StringBuilder();
    for (Node n : nodes.values()) {
      servers.append("    server ").append(n.name()).append(' ').append(n.ip());
      servers.append(":6443 check verify none\n");
    }
    String agentCheck =
        gated
            ? """
                http-check connect port %d ssl
                http-check send meth GET uri /readyz
                http-check expect status 200
            """
                .formatted(AGENT_PORT)
            : "";
    Path cfg = dir.resolve("haproxy.cfg");
    write(
        cfg,
        """
        defaults
            mode http
            option dontlognull
            option http-server-close
            option redispatch
            retries 1
            timeout http-request 10s
            timeout queue 20s
            timeout connect 5s
            timeout client 35s
            timeout server 35s
            timeout http-keep-alive 10s
            timeout check 10s
        listen stats
            bind 127.0.0.1:%d
            stats enable
            stats uri /stats
        frontend apiserver
            bind 127.0.0.1:%d
            mode tcp
            default_backend apiserverbackend
        backend apiserverbackend
            option httpchk
            http-check connect ssl
            http-check send meth GET uri /readyz
            http-check expect status 200
        %s    mode tcp
            balance roundrobin
        %s"""
            .formatted(statsPort, lbPort, agentCheck, servers));
    haproxy =
        start(
            List.of(HaproxyBinary.path().toString(), "-f", cfg.toString(), "-db"),
            dir.resolve("haproxy.log"));
  }

  public int loadBalancerPort() {
    return lbPort;
  }

  public Path kubeCaCert() {
    return kubeCa.caCert();
  }

  /** HAProxy's view of one server: {@code UP}, {@code DOWN}, ... (its stats CSV). */
  public String lbStatus(Node node) {
    Http.Answer csv = Http.get("127.0.0.1", statsPort, "/stats;csv", "text/plain");
    for (String line : csv.body().lines().toList()) {
      String[] f = line.split(",", -1);
      if (f.length > 17 && f[0].equals("apiserverbackend") && f[1].equals(node.name())) {
        return f[17];
      }
    }
    return "absent";
  }

  public void awaitApiServerReady(Node node, Duration limit) {
    Poll.until(
        node.name() + " kube-apiserver /readyz",
        limit,
        () -> {
          Processes.Result r =
              Processes.run(
                  "curl",
                  "-sk",
                  "-o",
                  "/dev/null",
                  "-w",
                  "%{http_code}",
                  "--max-time",
                  "2",
                  "https://" + node.ip() + ":6443/readyz");
          return r.output().trim().equals("200");
        });
  }

  private static Process start(List<String> command, Path log) {
    try {
      return new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    apiServers.forEach(Supervised::close);
    agents.forEach(AgentProcess::close);
    if (haproxy != null) {
      Processes.kill(haproxy);
    }
    processes.forEach(Processes::kill);
    network.close();
  }

  /** A process restarted one second after it exits, as the kubelet restarts a static Pod's. */
  private static final class Supervised {
    /** What a kubelet waits before it restarts a static Pod's container that exited. */
    static final long RESTART_BACKOFF_MILLIS = 1000;

    final String name;
    final List<String> command;
    final Path log;
    final Thread thread;
    volatile boolean closed;
    volatile Process process;
    volatile int restarts;

    Supervised(String name, List<String> command, Path log) {
      this.name = name;
      this.command = command;
      this.log = log;
      this.thread = new Thread(this::loop, name);
      thread.setDaemon(true);
      thread.start();
    }

    private void loop() {
      while (!closed) {
        process = start(command, log);
        if (closed) {
          Processes.kill(process);
          return;
        }
        try {
          int exit = process.waitFor();
          if (closed) {
            return;
          }
          restarts++;
          System.out.printf("%s %s exited %d; restarting it%n", Instant.now(), name, exit);
          Thread.sleep(RESTART_BACKOFF_MILLIS); // the kubelet's back-off, modelled, not a wait
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    void close() {
      closed = true;
      Process p = process;
      if (p != null) {
        Processes.kill(p);
      }
      thread.interrupt();
    }
  }

  private static Path mkdirs(Path p) {
    try {
      return Files.createDirectories(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void copy(Path from, Path to) {
    try {
      Files.copy(from, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
