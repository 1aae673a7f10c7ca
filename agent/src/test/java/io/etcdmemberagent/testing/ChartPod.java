package io.etcdmemberagent.testing;

import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1EnvVar;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One pod of the rendered chart played by processes in its own network namespace: the {@code join}
 * init container, then the {@code etcd} container (its command as rendered, from the config file
 * join wrote) and the {@code agent} container, each with exactly the rendered environment (downward
 * API fields filled in, {@code $(VAR)} expanded as the kubelet does). The volume is a folder kept
 * across restarts; the only substitutions are paths (volume and ConfigMap mounts), the etcd binary,
 * and a kubeconfig for the API stand-in instead of a service-account mount.
 */
public final class ChartPod implements AutoCloseable {

  private final String name;
  private final String namespace;
  private final String ip;
  private final Path dir;
  private final NodeNetwork network;
  private final Path etcdBinary;
  private Process etcd;
  private AgentProcess agent;
  private String lastJoinOutput = "";
  private Path serviceAccount;

  public ChartPod(
      String name, String namespace, NodeNetwork network, Path baseDir, Path etcdBinary) {
    this.name = name;
    this.namespace = namespace;
    this.network = network;
    this.ip = network.addPod(name);
    this.dir = baseDir.resolve(name);
    this.etcdBinary = etcdBinary;
    try {
      Files.createDirectories(volume());
      Files.createDirectories(dir.resolve("config"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String name() {
    return name;
  }

  public String ip() {
    return ip;
  }

  public Path volume() {
    return dir.resolve("volume");
  }

  /**
   * Mounts {@code dir} (token, ca.crt, namespace) at the ServiceAccount path in the join and agent
   * containers, as the kubelet's projected volume: a tmpfs over {@code /run} in the container's own
   * mount namespace holds the mount point, so the host is not touched.
   */
  public void serviceAccount(Path dir) {
    this.serviceAccount = dir;
  }

  private List<String> containerPrefix() {
    if (serviceAccount == null) {
      return network.inPod(name, List.of());
    }
    return network.inPod(
        name,
        List.of(
            "sh",
            "-c",
            "mount -t tmpfs tmpfs /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount"
                + " && mount --bind \"$0\" /run/secrets/kubernetes.io/serviceaccount && exec \"$@\"",
            serviceAccount.toString()));
  }

  public String lastJoinOutput() {
    return lastJoinOutput;
  }

  /** The init container to its end (as the kubelet waits for it); its exit status. */
  public int join(V1Container join, String configMapText, String uid, Map<String, String> extra) {
    writeConfigMap(configMapText);
    Map<String, String> env = env(join, uid);
    env.putAll(extra);
    try (AgentProcess p =
        AgentProcess.start(containerPrefix(), 0, env, join.getArgs().toArray(String[]::new))) {
      int exit = p.waitFor(180);
      lastJoinOutput = p.output();
      return exit;
    }
  }

  /** The etcd container: its rendered command, from the config file join wrote. */
  public void startEtcd(V1Container container) {
    List<String> command = new ArrayList<>();
    for (String word : container.getCommand()) {
      command.add(paths(word));
    }
    command.set(0, etcdBinary.toString());
    try {
      etcd =
          new ProcessBuilder(network.inPod(name, command))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("etcd.log").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The agent container, with its rendered environment plus {@code extra}. */
  public void startAgent(V1Container container, String uid, Map<String, String> extra) {
    Map<String, String> env = env(container, uid);
    env.putAll(extra);
    agent =
        AgentProcess.start(
            containerPrefix(),
            container.getPorts().get(0).getContainerPort(),
            env,
            container.getArgs().toArray(String[]::new));
  }

  public AgentProcess agent() {
    return agent;
  }

  /** Like a Pod deletion: SIGTERM to both containers, then wait. */
  public void stop() {
    if (agent != null) {
      agent.process().destroy();
      agent.waitFor(20);
      agent.close();
      agent = null;
    }
    if (etcd != null) {
      etcd.destroy();
      try {
        etcd.waitFor(20, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Processes.kill(etcd);
      etcd = null;
    }
  }

  /** The PersistentVolume is gone: a new, empty one. */
  public void loseVolume() throws IOException {
    try (var walk = Files.walk(volume())) {
      walk.sorted(java.util.Comparator.reverseOrder())
          .filter(p -> !p.equals(volume()))
          .forEach(
              p -> {
                try {
                  Files.delete(p);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    }
  }

  private void writeConfigMap(String text) {
    try {
      Files.writeString(dir.resolve("config").resolve("etcd.conf.yml"), text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The container's environment as the kubelet builds it. */
  Map<String, String> env(V1Container container, String uid) {
    Map<String, String> env = new LinkedHashMap<>();
    for (V1EnvVar e : container.getEnv()) {
      String value;
      if (e.getValueFrom() != null) {
        String field = e.getValueFrom().getFieldRef().getFieldPath();
        value =
            switch (field) {
              case "metadata.name" -> name;
              case "metadata.namespace" -> namespace;
              case "metadata.uid" -> uid;
              default -> throw new IllegalArgumentException("unexpected fieldRef " + field);
            };
      } else {
        value = expand(e.getValue(), env);
      }
      env.put(e.getName(), paths(value));
    }
    return env;
  }

  private static String expand(String value, Map<String, String> earlier) {
    Matcher m = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)").matcher(value);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String v = earlier.getOrDefault(m.group(1), m.group(0));
      m.appendReplacement(out, Matcher.quoteReplacement(v));
    }
    m.appendTail(out);
    return out.toString();
  }

  private String paths(String value) {
    return value
        .replace(
            "/etc/etcd-member-agent/etcd.conf.yml", dir.resolve("config/etcd.conf.yml").toString())
        .replace("/var/lib/etcd", volume().toString());
  }

  @Override
  public void close() {
    stop();
  }
}
