package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A one-member etcd of a given minor version with extra flags (TLS, a data dir on a special disk),
 * for focused ITs.
 */
public final class SingleEtcd {
  private SingleEtcd() {}

  /** Starts etcd serving {@code endpoint}; its output goes to {@code log}. */
  public static Process start(
      String version, String name, Path dataDir, String endpoint, Path log, String... extraArgs) {
    String peer = "http://127.0.0.1:" + FreePorts.next();
    return start(version, name, dataDir, endpoint, peer, peer, log, extraArgs);
  }

  /**
   * Starts etcd listening for peers on {@code peerListen} and advertising {@code peerAdvertise}
   * (they differ when a test wants an advertised peer port nobody listens on).
   */
  public static Process start(
      String version,
      String name,
      Path dataDir,
      String endpoint,
      String peerListen,
      String peerAdvertise,
      Path log,
      String... extraArgs) {
    String peer = peerAdvertise;
    List<String> args =
        new ArrayList<>(
            List.of(
                EtcdBinaries.etcd(version).toString(),
                "--name",
                name,
                "--data-dir",
                dataDir.toString(),
                "--listen-client-urls",
                endpoint,
                "--advertise-client-urls",
                endpoint,
                "--listen-peer-urls",
                peerListen,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                name + "=" + peer,
                "--logger",
                "zap"));
    args.addAll(List.of(extraArgs));
    try {
      return new ProcessBuilder(args)
          .redirectErrorStream(true)
          .redirectOutput(log.toFile())
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
