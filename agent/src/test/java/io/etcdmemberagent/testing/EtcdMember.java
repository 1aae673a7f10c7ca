package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** One real etcd process of a test cluster, with its ports and data dir. */
public final class EtcdMember {
  private final Path binary;
  private final String name;
  private final int clientPort;
  private final int peerPort;
  private final Path dataDir;
  private final Path logFile;
  private String advertisedClientUrl;
  private String advertisedPeerUrl;
  private Process process;
  private List<String> lastArgs = List.of();
  private List<String> extraFlags = List.of();

  EtcdMember(Path binary, String name, Path baseDir) {
    this.binary = binary;
    this.name = name;
    this.clientPort = FreePorts.next();
    this.peerPort = FreePorts.next();
    this.dataDir = baseDir.resolve(name + ".etcd");
    this.logFile = baseDir.resolve(name + ".log");
    this.advertisedClientUrl = clientUrl();
    this.advertisedPeerUrl = listenPeerUrl();
  }

  /** Flags added to etcd's command line (e.g. {@code --max-learners=2}), set before it starts. */
  void extraFlags(List<String> flags) {
    extraFlags = List.copyOf(flags);
  }

  /** What the member tells others its client URL is (its own by default), set before it starts. */
  void advertiseClientUrl(String url) {
    advertisedClientUrl = url;
  }

  /** What the member tells others its peer URL is (its own by default), set before it starts. */
  void advertisePeerUrl(String url) {
    advertisedPeerUrl = url;
  }

  public String name() {
    return name;
  }

  public String clientUrl() {
    return "http://127.0.0.1:" + clientPort;
  }

  /** The peer URL others know it by (the member list's). */
  public String peerUrl() {
    return advertisedPeerUrl;
  }

  /** The peer URL it listens on. */
  public String listenPeerUrl() {
    return "http://127.0.0.1:" + peerPort;
  }

  public Path dataDir() {
    return dataDir;
  }

  public Path logFile() {
    return logFile;
  }

  public boolean running() {
    return process != null && process.isAlive();
  }

  void start(String initialCluster, String state, String token) {
    List<String> args = new ArrayList<>();
    args.add(binary.toString());
    args.addAll(
        List.of(
            "--name",
            name,
            "--data-dir",
            dataDir.toString(),
            "--listen-client-urls",
            clientUrl(),
            "--advertise-client-urls",
            advertisedClientUrl,
            "--listen-peer-urls",
            listenPeerUrl(),
            "--initial-advertise-peer-urls",
            advertisedPeerUrl,
            "--initial-cluster",
            initialCluster,
            "--initial-cluster-state",
            state,
            "--initial-cluster-token",
            token,
            "--heartbeat-interval",
            "100",
            "--election-timeout",
            "1000",
            "--logger",
            "zap"));
    args.addAll(extraFlags);
    lastArgs = args;
    launch();
  }

  private void launch() {
    try {
      process =
          new ProcessBuilder(lastArgs)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start etcd " + name, e);
    }
  }

  /** Starts the process again with the arguments it last ran with (its data dir is kept). */
  public void restart() {
    if (running()) {
      throw new IllegalStateException(name + " is still running");
    }
    launch();
  }

  /**
   * Starts the process again on its data dir with another etcd binary and the same arguments: an
   * in-place upgrade (or downgrade) of this member.
   */
  public void restartAs(Path otherBinary) {
    if (running()) {
      throw new IllegalStateException(name + " is still running");
    }
    List<String> args = new ArrayList<>(lastArgs);
    args.set(0, otherBinary.toString());
    lastArgs = args;
    launch();
  }

  /** SIGSTOP: the process hangs; its ports still accept connections. */
  public void pause() {
    signal("STOP");
  }

  /** SIGCONT. */
  public void resume() {
    signal("CONT");
  }

  /** SIGKILL, and wait until the process is gone. */
  public void kill() {
    Processes.kill(process);
  }

  private void signal(String signal) {
    Processes.signal(process, signal);
  }
}
