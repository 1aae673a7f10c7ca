package io.etcdmemberagent.testing;

import java.nio.file.Path;

/**
 * The real kube-apiserver and kube-controller-manager, provided by {@code test-e2e/kube-bin.sh}
 * (built from k8s.io/kubernetes once, cached after).
 */
public final class KubeBinaries {

  /** The Kubernetes minor line the tests run against. */
  public static final String MINOR = "1.36";

  private static Path dir;

  private KubeBinaries() {}

  public static Path apiServer() {
    return dir().resolve("kube-apiserver");
  }

  public static Path controllerManager() {
    return dir().resolve("kube-controller-manager");
  }

  private static synchronized Path dir() {
    if (dir == null) {
      dir = fetch();
      String version = Processes.output(apiServer().toString(), "--version").trim();
      System.out.println("[kube-version] " + version + " (" + dir + ")");
    }
    return dir;
  }

  private static Path fetch() {
    return FetchScripts.run("kube.fetch.script", "kube-bin.sh", MINOR, 40);
  }
}
