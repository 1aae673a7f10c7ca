package io.etcdmemberagent.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Runs one of {@code test-e2e}'s fetch scripts ({@code etcd-bin.sh}, {@code kube-bin.sh}), which
 * print the path of what they provide (cached after the first run).
 */
final class FetchScripts {

  private FetchScripts() {}

  /**
   * {@code script} with {@code argument}; the script is the system property {@code property} (set
   * by Maven) or found above the working directory.
   */
  static Path run(String property, String script, String argument, int limitMinutes) {
    Path path = locate(property, script);
    try {
      Path out = Files.createTempFile("fetch", ".out");
      Process p =
          new ProcessBuilder("bash", path.toString(), argument)
              .redirectOutput(out.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      if (!p.waitFor(limitMinutes, TimeUnit.MINUTES) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IllegalStateException(path + " " + argument + " failed");
      }
      String printed = Files.readString(out, StandardCharsets.UTF_8).trim();
      Files.delete(out);
      return Path.of(printed);
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + path, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static Path locate(String property, String script) {
    String configured = System.getProperty(property);
    if (configured != null) {
      return Path.of(configured);
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve("test-e2e").resolve(script);
      if (Files.exists(candidate)) {
        return candidate;
      }
    }
    throw new IllegalStateException(
        "test-e2e/" + script + " not found above the working directory");
  }
}
