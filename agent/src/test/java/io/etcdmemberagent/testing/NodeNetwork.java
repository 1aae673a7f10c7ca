package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Pod networks on this machine: one Linux network namespace per pod with its own address on a
 * bridge, so every pod binds the chart's fixed ports on 0.0.0.0 as in a cluster, and per-namespace
 * hosts files ({@code /etc/netns/NAME/hosts}, bind-mounted by {@code ip netns exec}) give the
 * headless Service's per-pod names and the client Service's name. Needs root; everything is removed
 * on close.
 */
public final class NodeNetwork implements AutoCloseable {

  private final String id =
      Integer.toString(ThreadLocalRandom.current().nextInt(0x1000, 0xffff), 16);
  private final int subnet = ThreadLocalRandom.current().nextInt(16, 250);
  private final String bridge = "emabr" + id;
  private final Map<String, String> namespaces = new LinkedHashMap<>();
  private final Map<String, String> hosts = new LinkedHashMap<>();
  private final Map<String, String> veths = new LinkedHashMap<>();

  /** True when network namespaces can be made here (root with iproute2). */
  public static boolean available() {
    try {
      return run(List.of("ip", "netns", "list"));
    } catch (RuntimeException e) {
      return false;
    }
  }

  public NodeNetwork() {
    must("ip", "link", "add", bridge, "type", "bridge");
    must("ip", "addr", "add", gatewayIp() + "/24", "dev", bridge);
    must("ip", "link", "set", bridge, "up");
  }

  /** The bridge's address, reachable from every pod: where Services and the API stand-in live. */
  public String gatewayIp() {
    return "10.213." + subnet + ".1";
  }

  /** A new pod network namespace; returns its IP. */
  public synchronized String addPod(String pod) {
    String ns = "ema-" + id + "-" + pod;
    String ip = "10.213." + subnet + "." + (10 + namespaces.size());
    String veth = "ve" + id + namespaces.size();
    must("ip", "netns", "add", ns);
    must("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns);
    must("ip", "link", "set", veth, "master", bridge);
    must("ip", "link", "set", veth, "up");
    must("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
    must("ip", "netns", "exec", ns, "ip", "addr", "add", ip + "/24", "dev", "eth0");
    must("ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up");
    namespaces.put(pod, ns);
    veths.put(pod, veth);
    return ip;
  }

  /**
   * Limits what reaches {@code pod} from the bridge to {@code rate} (tc's token bucket, e.g. {@code
   * 16mbit}): a slow link to one node.
   */
  public synchronized void throttle(String pod, String rate) {
    must(
        "tc",
        "qdisc",
        "add",
        "dev",
        veths.get(pod),
        "root",
        "tbf",
        "rate",
        rate,
        "burst",
        "32kbit",
        "latency",
        "400ms");
  }

  /** A host name every pod resolves (a Service's or a pod's DNS name). */
  public synchronized void addHost(String name, String ip) {
    hosts.put(name, ip);
    StringBuilder file = new StringBuilder("127.0.0.1 localhost\n");
    hosts.forEach((n, i) -> file.append(i).append(' ').append(n).append('\n'));
    for (String ns : namespaces.values()) {
      writeHosts(ns, file.toString());
    }
  }

  private void writeHosts(String ns, String text) {
    try {
      Path dir = Files.createDirectories(Path.of("/etc/netns", ns));
      Files.writeString(dir.resolve("hosts"), text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The command prefix that runs a program inside the pod's network namespace. */
  public List<String> inPod(String pod, List<String> command) {
    List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", namespaces.get(pod)));
    full.addAll(command);
    return full;
  }

  private static void must(String... command) {
    if (!run(List.of(command))) {
      throw new IllegalStateException("failed: " + String.join(" ", command));
    }
  }

  private static boolean run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public synchronized void close() {
    for (String ns : namespaces.values()) {
      run(List.of("ip", "netns", "del", ns));
      try {
        Path dir = Path.of("/etc/netns", ns);
        Files.deleteIfExists(dir.resolve("hosts"));
        Files.deleteIfExists(dir);
      } catch (IOException ignored) {
        // a leftover empty folder under /etc/netns is harmless
      }
    }
    run(List.of("ip", "link", "del", bridge));
  }
}
