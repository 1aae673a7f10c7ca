package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the host forwards and filters: its forwarding and br_netfilter sysctls, and every table of
 * iptables and ip6tables as {@code iptables-save} prints them (without counters and comments).
 * {@code kube-node.sh} must leave all of it as it found it: the node has its own network namespace.
 */
public final class HostNetwork {

  private static final List<String> SYSCTLS =
      List.of(
          "net/ipv4/ip_forward",
          "net/ipv6/conf/all/forwarding",
          "net/ipv4/conf/all/route_localnet",
          "net/bridge/bridge-nf-call-iptables",
          "net/bridge/bridge-nf-call-ip6tables");

  private HostNetwork() {}

  /** The host's state now, read with the node's own {@code iptables-save} in {@code parts}. */
  public static String snapshot(Path parts) {
    List<String> lines = new ArrayList<>();
    for (String sysctl : SYSCTLS) {
      Path file = Path.of("/proc/sys").resolve(sysctl);
      try {
        lines.add(sysctl + "=" + (Files.exists(file) ? Files.readString(file).strip() : "absent"));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    for (String save : List.of("iptables-save", "ip6tables-save")) {
      Processes.Result r = Processes.run(Map.of(), 30, List.of(parts.resolve(save).toString()));
      if (r.exitCode() != 0) {
        throw new IllegalStateException(save + " exited " + r.exitCode() + ": " + r.output());
      }
      r.output()
          .lines()
          .filter(l -> !l.startsWith("#"))
          .map(l -> l.replaceAll(" \\[\\d+:\\d+\\]$", ""))
          .forEach(l -> lines.add(save + ": " + l));
    }
    return String.join("\n", lines);
  }
}
