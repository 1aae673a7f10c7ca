package io.etcdmemberagent.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free loopback ports, never the same one twice in this JVM, chosen below the kernel's ephemeral
 * range: a port from that range that is free now can become the source port of some outgoing
 * connection before etcd binds it ("address already in use").
 */
public final class FreePorts {
  private static final Set<Integer> HANDED_OUT = new HashSet<>();
  private static final int LOWEST = 10_000;

  private FreePorts() {}

  public static synchronized int next() {
    int highest = ephemeralLow() - 1;
    for (int attempt = 0; attempt < 1000; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(LOWEST, highest);
      if (HANDED_OUT.contains(port)) {
        continue;
      }
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        HANDED_OUT.add(port);
        return port;
      } catch (IOException taken) {
        // in use: try another
      }
    }
    throw new IllegalStateException("no free port found below the ephemeral range");
  }

  /** The start of the kernel's ephemeral port range (32768 when it cannot be read). */
  static int ephemeralLow() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      int low = Integer.parseInt(range.split("\\s+")[0]);
      return low > LOWEST + 1000 ? low : 32768;
    } catch (IOException | RuntimeException e) {
      return 32768;
    }
  }
}
