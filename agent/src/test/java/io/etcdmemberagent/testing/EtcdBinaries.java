package io.etcdmemberagent.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Real etcd binaries, provided by {@code test-e2e/etcd-bin.sh} (cached after the first run). */
public final class EtcdBinaries {

  /** The primary version: what users run, and what single-version tests use. */
  public static final String PRIMARY = "3.6";

  /**
   * The versions every integration and end-to-end test runs against: 3.6 and 3.5. {@code
   * -Detcd.versions=3.6,3.7} narrows (or widens) every set of this class to those named.
   */
  public static List<String> versions() {
    return narrowed(List.of("3.6", "3.5"));
  }

  /** For the learner lifecycle, join, promotion and fault suite: also the newest line, 3.7. */
  public static List<String> withNewest() {
    return narrowed(List.of("3.6", "3.5", "3.7"));
  }

  /** For the compatibility subset that still runs on 3.4 (end of life). */
  public static List<String> withOldest() {
    return narrowed(List.of("3.6", "3.5", "3.4"));
  }

  /** Every version the project runs: the demo offers each of them by name. */
  public static List<String> all() {
    return narrowed(List.of("3.6", "3.5", "3.7", "3.4"));
  }

  /** The primary version, or the first one {@code -Detcd.versions} names when it leaves 3.6 out. */
  public static String primary() {
    List<String> chosen = chosen();
    return chosen.isEmpty() || chosen.contains(PRIMARY) ? PRIMARY : chosen.get(0);
  }

  /**
   * For a test of a parameterized suite whose fault is on the agent's side (its API server, its own
   * link, its signals, its hysteresis), which no etcd version answers differently: skipped, saying
   * why, on any version but the primary, to keep the suite within its budget. The faults etcd
   * itself answers run on every version.
   */
  public static void onThePrimaryOnly(String version, String why) {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        version.equals(primary()), "on the primary version only: " + why);
  }

  private static List<String> narrowed(List<String> set) {
    List<String> chosen = chosen();
    return chosen.isEmpty() ? set : chosen;
  }

  private static List<String> chosen() {
    String property = System.getProperty("etcd.versions", "").trim();
    return property.isEmpty() ? List.of() : List.of(property.split(","));
  }

  private static final Map<String, Path> RESOLVED = new ConcurrentHashMap<>();

  private EtcdBinaries() {}

  public static Path etcd(String minor) {
    return RESOLVED.computeIfAbsent(minor, m -> recorded(m, fetch(m)));
  }

  /** etcdctl of the same version: beside etcd (built with it for 3.6+, Debian's etcd-client). */
  public static Path etcdctl(String minor) {
    return etcd(minor).resolveSibling("etcdctl");
  }

  /** The patch version that runs, as etcd reports it ({@code 3.6.16}). */
  public static String patchVersion(String minor) {
    etcd(minor);
    return PATCH.get(minor);
  }

  private static final Map<String, String> PATCH = new ConcurrentHashMap<>();

  /**
   * Says which patch version runs for a minor version, once per JVM, on standard output (it lands
   * in the test report) and in {@code target/etcd-versions.txt}.
   */
  private static Path recorded(String minor, Path binary) {
    String patch =
        Processes.output(binary.toString(), "--version")
            .lines()
            .filter(l -> l.startsWith("etcd Version: "))
            .map(l -> l.substring("etcd Version: ".length()).trim())
            .findFirst()
            .orElseThrow(() -> new IllegalStateException(binary + " --version names no version"));
    if (!patch.startsWith(minor + ".")) {
      throw new IllegalStateException(binary + " is etcd " + patch + ", not " + minor);
    }
    PATCH.put(minor, patch);
    String line = "etcd " + minor + " runs as " + patch + " (" + binary + ")";
    System.out.println("[etcd-versions] " + line);
    try {
      Path report = Path.of("target", "etcd-versions.txt");
      Files.createDirectories(report.getParent());
      Files.writeString(
          report,
          line + System.lineSeparator(),
          StandardCharsets.UTF_8,
          java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new IllegalStateException("cannot record the etcd version", e);
    }
    return binary;
  }

  private static Path fetch(String minor) {
    return FetchScripts.run("etcd.fetch.script", "etcd-bin.sh", minor, 5);
  }
}
