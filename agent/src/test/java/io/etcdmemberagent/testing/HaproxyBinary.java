package io.etcdmemberagent.testing;

import java.nio.file.Path;

/** A real HAProxy, provided by {@code test-e2e/haproxy-bin.sh} (Debian's package, cached). */
public final class HaproxyBinary {

  private static Path path;

  private HaproxyBinary() {}

  public static synchronized Path path() {
    if (path == null) {
      path = FetchScripts.run("haproxy.fetch.script", "haproxy-bin.sh", "bookworm", 10);
      System.out.println(
          "[haproxy-version] "
              + Processes.output(path.toString(), "-v").lines().findFirst().orElse(""));
    }
    return path;
  }
}
