package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The real agent jar as a process ({@code java -jar etcd-member-agent.jar ...}). */
public final class AgentProcess implements AutoCloseable {

  private final Process process;
  private final Path stderr;
  private final int httpPort;

  private AgentProcess(Process process, Path stderr, int httpPort) {
    this.process = process;
    this.stderr = stderr;
    this.httpPort = httpPort;
  }

  public static Path jar() {
    String configured = System.getProperty("agent.jar");
    Path jar = configured != null ? Path.of(configured) : Path.of("target/etcd-member-agent.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " not built (run the package phase first)");
    }
    return jar;
  }

  /** Starts {@code java -jar <jar> <args>}; {@code httpPort} is what the args chose. */
  public static AgentProcess start(int httpPort, Map<String, String> env, String... args) {
    return start(List.of(), httpPort, env, args);
  }

  /** The same behind a command prefix (e.g. {@code ip netns exec NS}), which must exec. */
  public static AgentProcess start(
      List<String> prefix, int httpPort, Map<String, String> env, String... args) {
    List<String> jvm = new ArrayList<>(prefix);
    jvm.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    return startJvm(jvm, httpPort, env, args);
  }

  /** {@code jvm}: the java command and its flags (another JDK, tuned flags, a CDS archive). */
  public static AgentProcess startJvm(
      List<String> jvm, int httpPort, Map<String, String> env, String... args) {
    return startJar(jvm, jar(), httpPort, env, args);
  }

  /** The same with another build of the agent (a benchmark's "before"). */
  public static AgentProcess startJar(
      List<String> jvm, Path jar, int httpPort, Map<String, String> env, String... args) {
    List<String> command = new ArrayList<>(jvm);
    command.add("-jar");
    command.add(jar.toString());
    command.addAll(List.of(args));
    try {
      Path stderr = Files.createTempFile("agent", ".log");
      ProcessBuilder pb =
          new ProcessBuilder(command)
              .redirectError(stderr.toFile())
              .redirectOutput(ProcessBuilder.Redirect.appendTo(stderr.toFile()));
      pb.environment().keySet().removeIf(k -> k.startsWith("ETCD_MEMBER_AGENT_"));
      pb.environment().putAll(env);
      return new AgentProcess(pb.start(), stderr, httpPort);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public int port() {
    return httpPort;
  }

  public Process process() {
    return process;
  }

  public String output() {
    try {
      return Files.readString(stderr, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits for the process to exit and returns its status, or -1 after the limit. */
  public int waitFor(long seconds) {
    try {
      return process.waitFor(seconds, TimeUnit.SECONDS) ? process.exitValue() : -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  @Override
  public void close() {
    process.destroyForcibly();
    waitFor(10);
    try {
      Files.deleteIfExists(stderr);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
