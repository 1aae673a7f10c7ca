package io.etcdmemberagent.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.testing.KubeNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmark harness. In the default test run it runs in smoke mode (one run, small data, short
 * windows) so that it cannot rot; {@code test-e2e/bench.sh} runs it in full mode and the tables go
 * to BENCHMARKS.md. No timing is asserted: only that every figure was measured.
 */
class BenchmarkE2E {

  @TempDir Path dir;

  /** One part of the harness, with how long it took on stdout (to keep the smoke run short). */
  private static void timed(String part, ThrowingRunnable body) throws Exception {
    long started = System.nanoTime();
    body.run();
    System.out.printf(
        "[bench] %s took %d s%n", part, (System.nanoTime() - started) / 1_000_000_000L);
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  @Test
  void measuresEveryFigure() throws Exception {
    Settings settings = Settings.fromSystemProperties();
    Report report = new Report();
    List<String> only = List.of(System.getProperty("bench.only", "").split(","));
    boolean all = only.equals(List.of(""));
    // the tables measured so far are written even when a later part fails: a full run is long
    try {
      if (all || only.contains("detection")) {
        timed("detection", () -> new DetectionBench(settings, dir).run(report));
      }
      if (all || only.contains("promotion")) {
        timed("promotion", () -> new PromotionBench(settings, dir).run(report));
      }
      if (all || only.contains("load")) {
        timed("load", () -> new LoadBench(settings, dir).run(report));
      }
      if (all || only.contains("latency")) {
        timed("latency", () -> new LatencyBench(settings, dir).run(report));
      }
      if (all || only.contains("secure")) {
        timed("secure", () -> new SecureServingBench(settings, dir).run(report));
      }
      if (all || only.contains("scale")) {
        timed("scale", () -> new ScaleBench(settings).run(report));
      }
      if (all || only.contains("footprint")) {
        timed("footprint", () -> new FootprintBench(settings, dir).run(report));
      }
      // the smoke run inside ./mvnw verify leaves the node part to ONLY=node: the node's own tests
      // already install the chart there, and its two minutes kept the cold run over its budget
      boolean nodeWanted = only.contains("node") || (all && !settings.mode().equals("smoke"));
      if (only.contains("tls") && KubeNode.available()) {
        timed("tls", () -> new EtcdTlsBench(settings, dir).run(report));
      }
      if (nodeWanted && KubeNode.available()) {
        timed("node", () -> new NodeBench(settings, dir).run(report));
      }
    } finally {
      String header =
          "<!-- bench mode "
              + settings.mode()
              + ", "
              + settings.runs()
              + " run(s) per figure, java "
              + System.getProperty("java.version")
              + " -->\n";
      String markdown = report.markdown(header);
      Path out = Path.of("target", "bench", "results-" + settings.mode() + ".md");
      Files.createDirectories(out.getParent());
      Files.writeString(out, markdown);
      System.out.println(markdown);
    }
    List<Report.Row> rows = report.rows();
    assertThat(rows).hasSizeGreaterThan(all ? 20 : 0);
    for (Report.Row row : rows) {
      if (!row.variant().equals("kubelet")) {
        assertThat(row.value()).as(row.figure() + " / " + row.variant()).containsPattern("\\d");
        assertThat(row.value()).as(row.figure() + " / " + row.variant()).doesNotContain("NaN");
      }
    }
  }
}
