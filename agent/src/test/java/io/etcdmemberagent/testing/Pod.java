package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One StatefulSet pod played on this machine: a {@code join} process (the init container), an etcd
 * process started from the env file join wrote, and a {@code run} process (the sidecar), wired the
 * way the chart wires them. Ports are free loopback ports; the data dir is kept across restarts of
 * the pod, like a volume.
 */
public final class Pod implements AutoCloseable {

  private final String name;
  private final Path etcdBinary;
  private final Path dir;
  private final int clientPort = FreePorts.next();
  private final int peerPort = FreePorts.next();
  private final int httpPort = FreePorts.next();
  private Process etcd;
  private AgentProcess agent;

  public Pod(String name, Path etcdBinary, Path baseDir) {
    this.name = name;
    this.etcdBinary = etcdBinary;
    this.dir = baseDir.resolve(name);
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String name() {
    return name;
  }

  public String clientUrl() {
    return "http://127.0.0.1:" + clientPort;
  }

  public String peerUrl() {
    return "http://127.0.0.1:" + peerPort;
  }

  public int httpPort() {
    return httpPort;
  }

  public Path dataDir() {
    return dir.resolve("data");
  }

  public Path envFile() {
    return dir.resolve("etcd.env");
  }

  public AgentProcess agent() {
    return agent;
  }

  /** Starts {@code join} (not waiting for it). */
  public AgentProcess startJoin(List<String> clusterEndpoints, String... extra) {
    List<String> args = new ArrayList<>();
    args.add("join");
    args.add("--name=" + name);
    args.add("--peer-urls=" + peerUrl());
    args.add("--client-urls=" + clientUrl());
    args.add("--data-dir=" + dataDir());
    args.add("--env-file=" + envFile());
    args.add("--cluster-endpoints=" + String.join(",", clusterEndpoints));
    args.add("--etcd-timeout=1s");
    args.add("--log-format=json");
    args.addAll(List.of(extra));
    return AgentProcess.start(0, Map.of(), args.toArray(String[]::new));
  }

  /** Runs {@code join} to its end; returns its exit status (output in {@code lastJoinOutput}). */
  public int join(List<String> clusterEndpoints, String... extra) {
    try (AgentProcess join = startJoin(clusterEndpoints, extra)) {
      int exit = join.waitFor(120);
      lastJoinOutput = join.output();
      return exit;
    }
  }

  public String lastJoinOutput = "";

  /** The env file join wrote, as a map. */
  public Map<String, String> env() {
    Map<String, String> env = new LinkedHashMap<>();
    try {
      for (String line : Files.readAllLines(envFile(), StandardCharsets.UTF_8)) {
        int eq = line.indexOf('=');
        if (line.startsWith("#") || eq < 0) {
          continue;
        }
        String value = line.substring(eq + 1);
        if (value.startsWith("'") && value.endsWith("'")) {
          value = value.substring(1, value.length() - 1).replace("'\\''", "'");
        }
        env.put(line.substring(0, eq), value);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return env;
  }

  /**
   * Starts etcd from the env file, as the etcd container does ({@code . env; exec etcd}), with
   * {@code extraFlags} (the cluster's own settings, e.g. {@code --max-learners=2}).
   */
  public void startEtcd(String... extraFlags) {
    List<String> args =
        new ArrayList<>(
            List.of(
                etcdBinary.toString(),
                "--listen-client-urls",
                clientUrl(),
                "--listen-peer-urls",
                peerUrl(),
                "--heartbeat-interval",
                "100",
                "--election-timeout",
                "1000",
                "--logger",
                "zap"));
    args.addAll(List.of(extraFlags));
    try {
      ProcessBuilder pb =
          new ProcessBuilder(args)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("etcd.log").toFile()));
      pb.environment().keySet().removeIf(k -> k.startsWith("ETCD_"));
      pb.environment().putAll(env());
      etcd = pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The last lines etcd printed, for failure messages. */
  public String etcdLogTail() {
    return LogFiles.tail(dir.resolve("etcd.log"), 5);
  }

  /** Starts the sidecar ({@code run}) with the chart's wiring plus {@code extra} flags. */
  public void startAgent(List<String> clusterEndpoints, String... extra) {
    List<String> args = new ArrayList<>();
    args.add("run");
    args.add("--etcd-endpoint=" + clientUrl());
    args.add("--cluster-endpoints=" + String.join(",", clusterEndpoints));
    args.add("--peer-urls=" + peerUrl());
    args.add("--http-host=127.0.0.1");
    args.add("--http-port=" + httpPort);
    args.add("--poll-interval=500ms");
    args.add("--learner-poll-interval=200ms");
    args.add("--etcd-timeout=1s");
    args.add("--log-format=json");
    args.addAll(List.of(extra));
    agent = AgentProcess.start(httpPort, Map.of(), args.toArray(String[]::new));
  }

  public boolean etcdRunning() {
    return etcd != null && etcd.isAlive();
  }

  public void signalEtcd(String signal) {
    Processes.signal(etcd, signal);
  }

  public void killEtcd() {
    Processes.kill(etcd);
  }

  public void stopAgent() {
    if (agent != null) {
      agent.close();
      agent = null;
    }
  }

  @Override
  public void close() {
    stopAgent();
    killEtcd();
  }
}
