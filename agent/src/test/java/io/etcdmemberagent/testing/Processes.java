package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;

/** Signals for test processes: SIGSTOP / SIGCONT through kill(1), and a sure kill. */
public final class Processes {
  private Processes() {}

  /** Sends {@code signal} (STOP, CONT, TERM, ...) to a live process. */
  public static void signal(Process process, String signal) {
    if (process == null || !process.isAlive()) {
      return;
    }
    try {
      new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
          .start()
          .waitFor(5, TimeUnit.SECONDS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Runs a short command to its end (at most 30 s) and returns what it printed, standard output and
   * error together; fails when it exits non-zero.
   */
  public static String output(String... command) {
    Result r = run(command);
    if (r.exitCode() != 0) {
      throw new IllegalStateException(
          String.join(" ", command) + " exited " + r.exitCode() + ": " + r.output());
    }
    return r.output();
  }

  /** What a finished command printed (standard output and error) and its exit status. */
  public record Result(int exitCode, String output) {}

  /** Runs a short command to its end (at most 30 s), whatever its exit status. */
  public static Result run(String... command) {
    return run(java.util.Map.of(), 30, java.util.List.of(command));
  }

  /**
   * Runs a command with {@code env} added to this environment to its end (at most {@code
   * limitSeconds}), whatever its exit status.
   */
  public static Result run(
      java.util.Map<String, String> env, int limitSeconds, java.util.List<String> command) {
    try {
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
      pb.environment().putAll(env);
      Process p = pb.start();
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(limitSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(
            String.join(" ", command) + " did not end within " + limitSeconds + " s");
      }
      return new Result(p.exitValue(), new String(out, java.nio.charset.StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** SIGCONT (a stopped process cannot die), SIGKILL, and wait until it is gone. */
  public static void kill(Process process) {
    if (process == null) {
      return;
    }
    signal(process, "CONT");
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
