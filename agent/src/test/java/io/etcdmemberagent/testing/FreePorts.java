package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/** Free loopback ports, never the same one twice in this JVM. */
public final class FreePorts {
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private FreePorts() {}

  public static synchronized int next() {
    for (int attempt = 0; attempt < 100; attempt++) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int port = s.getLocalPort();
        if (HANDED_OUT.add(port)) {
          return port;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    throw new IllegalStateException("no free port found");
  }
}
