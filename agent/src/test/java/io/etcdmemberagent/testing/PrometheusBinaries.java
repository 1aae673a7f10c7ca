package io.etcdmemberagent.testing;

import java.nio.file.Path;

/** Real Prometheus and promtool, provided by {@code test-e2e/prometheus-bin.sh} (Debian's). */
public final class PrometheusBinaries {

  private static Path dir;

  private PrometheusBinaries() {}

  public static Path prometheus() {
    return dir().resolve("prometheus");
  }

  public static Path promtool() {
    return dir().resolve("promtool");
  }

  private static synchronized Path dir() {
    if (dir == null) {
      dir = FetchScripts.run("prometheus.fetch.script", "prometheus-bin.sh", "bookworm", 10);
      System.out.println(
          "[prometheus-version] "
              + Processes.output(dir.resolve("promtool").toString(), "--version")
                  .lines()
                  .findFirst()
                  .orElse(""));
    }
    return dir;
  }
}
