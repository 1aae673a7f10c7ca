package io.etcdmemberagent.testing;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real single-node Kubernetes ({@code test-e2e/kube-node.sh}: kubelet, containerd, runc, CNI,
 * kube-proxy, CoreDNS, the control plane, images built here), shared by every test of this JVM: up
 * on first use, down when the JVM ends. The tests drive it as a user does, with its {@code
 * kubectl}, {@code helm} and {@code crictl}.
 */
public final class KubeNode {

  /** The node's name (the kubelet's hostname override). */
  public static final String NAME = "ema-node";

  private static KubeNode shared;

  private final Path script;
  private final Path dir;
  private final Path kubeconfig;
  private final Map<String, String> env;
  private final String hostNetworkBeforeUp;

  private KubeNode(Path script, Path dir, Path kubeconfig, String hostNetworkBeforeUp) {
    this.script = script;
    this.dir = dir;
    this.kubeconfig = kubeconfig;
    this.hostNetworkBeforeUp = hostNetworkBeforeUp;
    this.env =
        Map.of(
            "KUBECONFIG",
            kubeconfig.toString(),
            "CRI_CONFIG_FILE",
            dir.resolve("crictl.yaml").toString());
  }

  /** Root is needed for namespaces, mounts, cgroups and iptables. */
  public static boolean available() {
    return "root".equals(System.getProperty("user.name"));
  }

  /** The node, started on first use (builds and images cached after the first run). */
  public static synchronized KubeNode shared() {
    if (shared == null) {
      shared = up();
      KubeNode node = shared;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> node.down(), "kube-node-down"));
    }
    return shared;
  }

  private static KubeNode up() {
    Path script = FetchScripts.locate("kube.node.script", "kube-node.sh");
    String before = HostNetwork.snapshot(parts());
    try {
      Path dir = Files.createTempDirectory("kube-node");
      return new KubeNode(script, dir, up(script, dir), before);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code kube-node.sh up DIR}; the admin kubeconfig it printed. */
  private static Path up(Path script, Path dir) {
    try {
      Path log = dir.resolve("up.log");
      long started = System.nanoTime();
      Process p =
          new ProcessBuilder("bash", script.toString(), "up", dir.toString())
              .redirectOutput(dir.resolve("up.out").toFile())
              .redirectError(log.toFile())
              .start();
      if (!p.waitFor(30, TimeUnit.MINUTES) || p.exitValue() != 0) {
        p.destroyForcibly();
        new KubeNode(script, dir, dir.resolve("admin.kubeconfig"), "").down();
        throw new IllegalStateException(
            "kube-node.sh up failed: " + LogFiles.tail(log, 20) + "\n(everything in " + dir + ")");
      }
      List<String> out = Files.readAllLines(dir.resolve("up.out"));
      System.out.printf(
          "[kube-node] up in %.1f s: %s%n",
          (System.nanoTime() - started) / 1e9, LogFiles.tail(log, 1).strip());
      return Path.of(out.get(out.size() - 1));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The node's parts (node-bin.sh, cached after its first run): iptables-save among them. */
  private static Path parts() {
    Path nodeBin =
        FetchScripts.locate("kube.node.script", "kube-node.sh").resolveSibling("node-bin.sh");
    Processes.Result r = Processes.run(Map.of(), 1800, List.of("bash", nodeBin.toString()));
    if (r.exitCode() != 0) {
      throw new IllegalStateException("node-bin.sh failed: " + r.output());
    }
    List<String> lines = r.output().strip().lines().toList();
    return Path.of(lines.get(lines.size() - 1));
  }

  /** The host's network ({@link HostNetwork}) just before this node's first up. */
  public String hostNetworkBeforeUp() {
    return hostNetworkBeforeUp;
  }

  /**
   * Takes this node down, runs {@code whileDown}, and brings it up again in the same DIR (the tests
   * after it find it as before, empty).
   */
  public synchronized void downAndUpAgain(Runnable whileDown) {
    if (!down()) {
      throw new IllegalStateException("kube-node.sh down " + dir + " failed");
    }
    try {
      whileDown.run();
    } finally {
      up(script, dir);
    }
  }

  /**
   * Stops the node; then removes its bulk (containerd's images and snapshots, the volumes, etcd's
   * data: about 2 GB a run) and keeps its logs and configuration in {@link #dir()}.
   */
  private boolean down() {
    Processes.Result r =
        Processes.run(Map.of(), 300, List.of("bash", script.toString(), "down", dir.toString()));
    if (r.exitCode() != 0) {
      System.err.println("[kube-node] down failed, " + dir + " kept whole: " + r.output());
      return false;
    }
    for (String bulk : List.of("containerd", "volumes", "etcd", "kubelet", "cni/ipam")) {
      Path p = dir.resolve(bulk);
      if (!Files.exists(p)) {
        continue;
      }
      try (var paths = Files.walk(p)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      } catch (IOException | RuntimeException e) {
        System.err.println("[kube-node] could not remove " + p + ": " + e);
      }
    }
    return true;
  }

  /** {@code kube-node.sh COMMAND DIR} as a user runs it, for any DIR (its exit and output). */
  public Processes.Result script(String command, Path anyDir) {
    return Processes.run(
        Map.of(), 300, List.of("bash", script.toString(), command, anyDir.toString()));
  }

  /** One of the node's parts by name ({@code iptables}, {@code ip6tables}, ...). */
  public Path part(String name) {
    try {
      String bins =
          Files.readAllLines(dir.resolve("parts")).stream()
              .filter(l -> l.startsWith("bins="))
              .map(l -> l.substring("bins=".length()))
              .findFirst()
              .orElseThrow();
      return Path.of(bins, name);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public Path dir() {
    return dir;
  }

  /** The API server's address, as this host reaches it: the admin kubeconfig's server. */
  public String server() {
    try {
      return Files.readAllLines(kubeconfig).stream()
          .map(l -> l.replaceAll(".*server: \"([^\"]+)\".*", "$1"))
          .filter(l -> l.startsWith("https://"))
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no server in " + kubeconfig));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** An admin REST client (system:masters), for reads too frequent for a kubectl process each. */
  public KubeRest admin() {
    Path pki = dir.resolve("pki");
    return KubeRest.withCertificate(
        server(), pki.resolve("ca.crt"), pki.resolve("admin.crt"), pki.resolve("admin.key"));
  }

  public Path kubeconfig() {
    return kubeconfig;
  }

  /** {@code values-node.yaml}: the images on this node and its storage class. */
  public Path values() {
    return dir.resolve("values-node.yaml");
  }

  /** Runs one of the node's tools ({@code kubectl}, {@code helm}, {@code crictl}). */
  public Processes.Result tool(String tool, int limitSeconds, String... args) {
    List<String> command = new ArrayList<>(List.of(dir.resolve("bin").resolve(tool).toString()));
    command.addAll(List.of(args));
    return Processes.run(env, limitSeconds, command);
  }

  /** Runs a tool to its end; fails naming the command and what it printed on a non-zero exit. */
  public String must(String tool, int limitSeconds, String... args) {
    Processes.Result r = tool(tool, limitSeconds, args);
    if (r.exitCode() != 0) {
      throw new IllegalStateException(
          tool + " " + String.join(" ", args) + " exited " + r.exitCode() + ": " + r.output());
    }
    return r.output();
  }

  public String kubectl(String... args) {
    return must("kubectl", 120, args);
  }

  public String helm(String... args) {
    return must("helm", 600, args);
  }

  public String crictl(String... args) {
    return must("crictl", 60, args);
  }

  /**
   * The working set of every container named {@code container} in {@code namespace}, by Pod name,
   * in bytes: the memory the kubelet counts against the limit (its {@code /stats/summary}).
   */
  public Map<String, Long> workingSets(String namespace, String container) {
    Map<String, Long> bytes = new java.util.TreeMap<>();
    JsonObject summary =
        JsonParser.parseString(
                kubectl("get", "--raw", "/api/v1/nodes/" + NAME + "/proxy/stats/summary"))
            .getAsJsonObject();
    for (var p : summary.getAsJsonArray("pods")) {
      JsonObject ref = p.getAsJsonObject().getAsJsonObject("podRef");
      if (!ref.get("namespace").getAsString().equals(namespace)) {
        continue;
      }
      for (var c : p.getAsJsonObject().getAsJsonArray("containers")) {
        JsonObject o = c.getAsJsonObject();
        if (o.get("name").getAsString().equals(container)) {
          bytes.put(
              ref.get("name").getAsString(),
              o.getAsJsonObject("memory").get("workingSetBytes").getAsLong());
        }
      }
    }
    return bytes;
  }

  /** The running container's ID, by its Pod and name (one expected). */
  public String containerId(String namespace, String pod, String container) {
    String[] ids =
        crictl(
                "ps",
                "-q",
                "--name",
                "^" + container + "$",
                "--label",
                "io.kubernetes.pod.name=" + pod,
                "--label",
                "io.kubernetes.pod.namespace=" + namespace)
            .strip()
            .split("\\s+");
    if (ids.length != 1 || ids[0].isEmpty()) {
      throw new IllegalStateException(
          namespace + "/" + pod + "/" + container + ": running containers " + ids.length);
    }
    return ids[0];
  }

  /** {@code crictl inspect}'s {@code info} (pid, runtimeSpec), with its {@code status} added. */
  public JsonObject inspect(String containerId) {
    JsonObject all = JsonParser.parseString(crictl("inspect", containerId)).getAsJsonObject();
    JsonObject info = all.getAsJsonObject("info");
    info.add("status", all.getAsJsonObject("status"));
    return info;
  }

  /** The host PID of the container's first process. */
  public long containerPid(String namespace, String pod, String container) {
    return inspect(containerId(namespace, pod, container)).get("pid").getAsLong();
  }

  /** {@code kubectl get ... -o json}, parsed. */
  public JsonObject getJson(String... args) {
    List<String> all = new ArrayList<>(List.of("get"));
    all.addAll(List.of(args));
    all.addAll(List.of("-o", "json"));
    return JsonParser.parseString(kubectl(all.toArray(String[]::new))).getAsJsonObject();
  }
}
