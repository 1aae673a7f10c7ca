package io.etcdmemberagent.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What one fault test started (clusters, proxies, rigs, pods, temp dirs), closed in the reverse
 * order of starting so that an agent stops before the etcd it watches.
 */
final class Resources implements AutoCloseable {

  private final List<AutoCloseable> started = new ArrayList<>();

  <T extends AutoCloseable> T keep(T resource) {
    started.add(0, resource);
    return resource;
  }

  /** A temp dir, deleted with everything in it on close. */
  Path tempDir(String prefix) throws IOException {
    Path dir = Files.createTempDirectory(prefix);
    keep(() -> deleteTree(dir));
    return dir;
  }

  @Override
  public void close() throws Exception {
    Exception first = null;
    for (AutoCloseable r : started) {
      try {
        r.close();
      } catch (Exception e) {
        first = first == null ? e : first;
      }
    }
    started.clear();
    if (first != null) {
      throw first;
    }
  }

  private static void deleteTree(Path dir) {
    try (var paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
