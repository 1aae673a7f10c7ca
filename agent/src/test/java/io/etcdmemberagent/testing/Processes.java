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
