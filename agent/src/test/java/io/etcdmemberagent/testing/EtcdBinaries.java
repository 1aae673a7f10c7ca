package io.etcdmemberagent.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** Real etcd binaries, provided by {@code test-e2e/etcd-bin.sh} (cached after the first run). */
public final class EtcdBinaries {

  /** The versions the integration tests run against: {@code -Detcd.versions=3.5,3.4}. */
  public static List<String> versions() {
    return List.of(System.getProperty("etcd.versions", "3.5,3.4").split(","));
  }

  private static final Map<String, Path> RESOLVED = new ConcurrentHashMap<>();

  private EtcdBinaries() {}

  public static Path etcd(String minor) {
    return RESOLVED.computeIfAbsent(minor, EtcdBinaries::fetch);
  }

  private static Path fetch(String minor) {
    Path script = script();
    try {
      Path out = Files.createTempFile("etcd-bin", ".out");
      Process p =
          new ProcessBuilder("bash", script.toString(), minor)
              .redirectOutput(out.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IllegalStateException(script + " " + minor + " failed");
      }
      String path = Files.readString(out, StandardCharsets.UTF_8).trim();
      Files.delete(out);
      return Path.of(path);
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + script, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static Path script() {
    String configured = System.getProperty("etcd.fetch.script");
    if (configured != null) {
      return Path.of(configured);
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve("test-e2e/etcd-bin.sh");
      if (Files.exists(candidate)) {
        return candidate;
      }
    }
    throw new IllegalStateException("test-e2e/etcd-bin.sh not found above the working directory");
  }
}
