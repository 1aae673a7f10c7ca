package io.etcdmemberagent.testing;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The real kube-apiserver and kube-controller-manager of one Kubernetes minor line, provided by
 * {@code test-e2e/kube-bin.sh} (built from k8s.io/kubernetes once, cached after).
 */
public final class KubeBinaries {

  /** The Kubernetes minor line the tests run against (the node's too). */
  public static final String MINOR = "1.36";

  /**
   * The oldest minor line the chart claims ({@code kubeVersion} in Chart.yaml): the oldest one
   * upstream still patches (1.35, until February 2027). Its API server and controller manager take
   * the chart in {@code ChartOnApiServerIT}.
   */
  public static final String OLDEST = "1.35";

  private static final Map<String, KubeBinaries> BY_MINOR = new ConcurrentHashMap<>();

  private final String minor;
  private volatile Path dir;

  private KubeBinaries(String minor) {
    this.minor = minor;
  }

  /** The binaries of {@link #MINOR}. */
  public static KubeBinaries primary() {
    return of(MINOR);
  }

  /** The binaries of {@code minor} (one that has a module under test-e2e/kube-go/). */
  public static KubeBinaries of(String minor) {
    return BY_MINOR.computeIfAbsent(minor, KubeBinaries::new);
  }

  public String minor() {
    return minor;
  }

  public Path kubeApiServer() {
    return dir().resolve("kube-apiserver");
  }

  public Path kubeControllerManager() {
    return dir().resolve("kube-controller-manager");
  }

  /** {@link #MINOR}'s kube-apiserver. */
  public static Path apiServer() {
    return primary().kubeApiServer();
  }

  /** {@link #MINOR}'s kube-controller-manager. */
  public static Path controllerManager() {
    return primary().kubeControllerManager();
  }

  private synchronized Path dir() {
    if (dir == null) {
      Path fetched = FetchScripts.run("kube.fetch.script", "kube-bin.sh", minor, 40);
      String version =
          Processes.output(fetched.resolve("kube-apiserver").toString(), "--version").trim();
      System.out.println("[kube-version] " + version + " (" + fetched + ")");
      if (!version.startsWith("Kubernetes v" + minor + ".")) {
        // KUBE_BIN_DIR names one directory for every minor
        throw new IllegalStateException(
            fetched + " holds " + version + ", not the " + minor + " line asked for");
      }
      dir = fetched;
    }
    return dir;
  }
}
