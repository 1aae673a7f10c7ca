package io.etcdmemberagent.testing;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodReadinessGate;
import io.kubernetes.client.openapi.models.V1Probe;
import io.kubernetes.client.openapi.models.V1Volume;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiPredicate;

/**
 * The kubelet's part, and only that, for the Pods of one namespace on a real API server: binds each
 * new Pod to this node, projects its ServiceAccount token (a TokenRequest bound to the Pod), runs
 * its init container ({@code join}, retried as the kubelet restarts failed init containers) and its
 * containers as processes in the Pod's network namespace ({@link ChartPod}), probes readiness with
 * the Pod's own probes, and writes the Pod's status: phase, IPs, {@code Initialized}, {@code
 * ContainersReady} and {@code Ready} by the kubelet's rule (containers ready first, then every
 * readiness gate's condition True, else {@code ReadinessGatesNotReady}). A Pod marked for deletion
 * has its containers stopped (SIGTERM, then wait) and is then deleted for good, as the kubelet
 * confirms a graceful deletion.
 */
public final class Kubelet implements AutoCloseable {

  /**
   * One Ready change the kubelet wrote (or, {@code ready=false}, a Ready Pod's containers about to
   * be stopped for its deletion): which Pod incarnation, to what, when.
   */
  public record ReadyChange(String pod, String uid, boolean ready, Instant at) {}

  public static final String NODE = "node-1";

  /**
   * One container's readiness as the kubelet's prober keeps it: probes every {@code periodSeconds}
   * after {@code initialDelaySeconds} (and only once the startup probe, if any, has passed); ready
   * after {@code successThreshold} successes in a row, unready after {@code failureThreshold}
   * failures in a row (defaults 1 and 3).
   */
  private static final class Prober {
    private final V1Probe startup;
    private final V1Probe readiness;
    private boolean started;
    private boolean ready;
    private int successes;
    private int failures;
    private Instant next;

    Prober(V1Container c, Instant start) {
      this.startup = c.getStartupProbe();
      this.readiness = c.getReadinessProbe();
      this.started = startup == null;
      V1Probe first = started ? readiness : startup;
      int delay =
          first == null || first.getInitialDelaySeconds() == null
              ? 0
              : first.getInitialDelaySeconds();
      this.next = start.plusSeconds(delay);
    }

    boolean ready(Instant now, java.util.function.Predicate<V1Probe> passes) {
      if (readiness == null) {
        return started || tick(now, passes);
      }
      if (now.isBefore(next)) {
        return ready;
      }
      if (!started) {
        started = passes.test(startup);
        next = now.plusSeconds(period(startup));
        return false;
      }
      next = now.plusSeconds(period(readiness));
      if (passes.test(readiness)) {
        failures = 0;
        successes++;
        ready = ready || successes >= threshold(readiness.getSuccessThreshold(), 1);
      } else {
        successes = 0;
        failures++;
        ready = ready && failures < threshold(readiness.getFailureThreshold(), 3);
      }
      return ready;
    }

    private boolean tick(Instant now, java.util.function.Predicate<V1Probe> passes) {
      if (!now.isBefore(next)) {
        started = passes.test(startup);
        next = now.plusSeconds(period(startup));
      }
      return started;
    }

    private static int period(V1Probe p) {
      return p.getPeriodSeconds() == null ? 10 : p.getPeriodSeconds();
    }

    private static int threshold(Integer value, int otherwise) {
      return value == null ? otherwise : value;
    }
  }

  private final KubeControlPlane kube;
  private final NodeNetwork network;
  private final String namespace;
  private final Path dir;
  private final Path etcdBinary;
  private final JSON json = new JSON();
  private final Map<String, ChartPod> pods = new ConcurrentHashMap<>();
  private final Map<String, String> running = new ConcurrentHashMap<>(); // name -> uid
  private final Set<String> handled = ConcurrentHashMap.newKeySet(); // uids
  private final List<ReadyChange> readyChanges = new CopyOnWriteArrayList<>();
  private final List<ReadyChange> runChanges = new CopyOnWriteArrayList<>();
  private final List<String> problems = new CopyOnWriteArrayList<>();
  private final BiPredicate<String, ChartPod> mayBeReady;
  private final Thread loop;
  private volatile boolean stopped;

  /**
   * {@code mayBeReady}: asked before each Ready=True the kubelet writes (a test's invariant, e.g.
   * "this Pod's member is not a learner"); a false answer is recorded as a problem, not enforced.
   */
  public Kubelet(
      KubeControlPlane kube,
      NodeNetwork network,
      String namespace,
      Path dir,
      Path etcdBinary,
      BiPredicate<String, ChartPod> mayBeReady) {
    this.kube = kube;
    this.network = network;
    this.namespace = namespace;
    this.dir = dir;
    this.etcdBinary = etcdBinary;
    this.mayBeReady = mayBeReady;
    kube.admin()
        .post(
            "/api/v1/nodes",
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" + NODE + "\"}}");
    this.loop = new Thread(this::watchPods, "kubelet");
    loop.setDaemon(true);
    loop.start();
  }

  public List<ReadyChange> readyChanges() {
    return List.copyOf(readyChanges);
  }

  /** The fewest Pods Ready at once between {@code from} and {@code to}. */
  public int fewestReady(Instant from, Instant to) {
    return fewest(readyChanges, from, to);
  }

  /** The fewest Pods whose containers ran at once between {@code from} and {@code to}. */
  public int fewestRunning(Instant from, Instant to) {
    return fewest(runChanges, from, to);
  }

  private static int fewest(List<ReadyChange> changes, Instant from, Instant to) {
    Map<String, Boolean> ready = new java.util.HashMap<>();
    int fewest = Integer.MAX_VALUE;
    for (ReadyChange c : changes) {
      if (c.at().isAfter(to)) {
        break;
      }
      ready.put(c.pod(), c.ready());
      if (!c.at().isBefore(from)) {
        fewest = Math.min(fewest, (int) ready.values().stream().filter(b -> b).count());
      }
    }
    return fewest;
  }

  /** Invariant answers that were false, and lifecycle failures. */
  public List<String> problems() {
    return List.copyOf(problems);
  }

  public ChartPod pod(String name) {
    return pods.get(name);
  }

  /** The Pods whose containers run now and whose Ready this kubelet last wrote True. */
  public List<ChartPod> readyPods() {
    List<ChartPod> out = new ArrayList<>();
    for (Map.Entry<String, String> e : running.entrySet()) {
      String uid = e.getValue();
      ReadyChange last = null;
      for (ReadyChange c : readyChanges) {
        if (c.uid().equals(uid)) {
          last = c;
        }
      }
      if (last != null && last.ready()) {
        out.add(pods.get(e.getKey()));
      }
    }
    return out;
  }

  private void watchPods() {
    while (!stopped) {
      try {
        JsonArray items = kube.admin().getJson(podsPath()).getAsJsonArray("items");
        for (JsonElement item : items) {
          V1Pod pod = json.deserialize(item.toString(), V1Pod.class);
          String uid = pod.getMetadata().getUid();
          if (pod.getMetadata().getDeletionTimestamp() == null && handled.add(uid)) {
            Thread t = new Thread(() -> live(pod), "kubelet " + pod.getMetadata().getName());
            t.setDaemon(true);
            t.start();
          }
        }
      } catch (RuntimeException e) {
        // the API server may be restarting: try again
      }
      pause(200);
    }
  }

  /** One Pod incarnation from binding to its deletion. */
  private void live(V1Pod pod) {
    String name = pod.getMetadata().getName();
    String uid = pod.getMetadata().getUid();
    try {
      Poll.until(
          name + "'s previous incarnation stopped",
          Duration.ofSeconds(60),
          () -> !running.containsKey(name));
      running.put(name, uid);
      ChartPod chartPod = pods.computeIfAbsent(name, n -> newPod(pod));
      bind(name, uid);
      chartPod.serviceAccount(projectToken(pod));
      writeStatus(name, uid, "Pending", chartPod, false, false, List.of());
      String config = configMapText(pod);
      V1Container init = pod.getSpec().getInitContainers().get(0);
      while (exists(name, uid)) {
        int exit = chartPod.join(init, config, uid, serviceEnv());
        if (exit == 0) {
          break;
        }
        problems.add(name + " join exited " + exit + ": " + chartPod.lastJoinOutput());
        pause(2000); // the kubelet's back-off before restarting an init container
      }
      chartPod.startEtcd(container(pod, "etcd"));
      chartPod.startAgent(container(pod, "agent"), uid, serviceEnv());
      runChanges.add(new ReadyChange(name, uid, true, Instant.now()));
      Map<String, Prober> probers = new java.util.LinkedHashMap<>();
      for (V1Container c : pod.getSpec().getContainers()) {
        probers.put(c.getName(), new Prober(c, Instant.now()));
      }
      Boolean written = null;
      while (!markedForDeletion(name, uid)) {
        boolean containersReady = true;
        for (Prober prober : probers.values()) {
          containersReady &= prober.ready(Instant.now(), p -> probePasses(pod, p, chartPod));
        }
        boolean ready = containersReady && gatesTrue(name, pod.getSpec().getReadinessGates());
        if (written == null || written != ready) {
          if (ready && !mayBeReady.test(name, chartPod)) {
            problems.add(name + " (" + uid + ") about to be Ready while it may not be");
          }
          writeStatus(
              name,
              uid,
              "Running",
              chartPod,
              containersReady,
              ready,
              pod.getSpec().getReadinessGates());
          readyChanges.add(new ReadyChange(name, uid, ready, Instant.now()));
          written = ready;
        }
        pause(250);
      }
      if (Boolean.TRUE.equals(written)) {
        readyChanges.add(new ReadyChange(name, uid, false, Instant.now()));
      }
      runChanges.add(new ReadyChange(name, uid, false, Instant.now()));
      chartPod.stop();
      kube.admin()
          .send(
              "DELETE",
              podsPath() + "/" + name,
              "application/json",
              "{\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"" + uid + "\"}}");
    } catch (RuntimeException | AssertionError e) {
      if (!stopped) {
        problems.add(name + " (" + uid + "): " + e);
      }
    } finally {
      running.remove(name, uid);
    }
  }

  /** A network namespace for the Pod, and its DNS name {@code hostname.subdomain.ns.svc}. */
  private ChartPod newPod(V1Pod pod) {
    String name = pod.getMetadata().getName();
    ChartPod chartPod = new ChartPod(name, namespace, network, dir, etcdBinary);
    if (pod.getSpec().getSubdomain() != null) {
      String host = pod.getSpec().getHostname() == null ? name : pod.getSpec().getHostname();
      network.addHost(
          host + "." + pod.getSpec().getSubdomain() + "." + namespace + ".svc", chartPod.ip());
    }
    return chartPod;
  }

  private void bind(String name, String uid) {
    String binding =
        """
        {"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s","uid":"%s"},
         "target":{"apiVersion":"v1","kind":"Node","name":"%s"}}
        """
            .formatted(name, uid, NODE);
    var answer = kube.admin().post(podsPath() + "/" + name + "/binding", binding);
    if (!answer.ok()) {
      throw new IllegalStateException("binding " + name + ": " + answer);
    }
  }

  /** The projected ServiceAccount volume: a token bound to this Pod, the CA, the namespace. */
  private Path projectToken(V1Pod pod) {
    String name = pod.getMetadata().getName();
    String uid = pod.getMetadata().getUid();
    Path sa = dir.resolve(name + "-" + uid.substring(0, 8) + "-serviceaccount");
    try {
      Files.createDirectories(sa);
      JsonObject bound = new JsonObject();
      bound.addProperty("apiVersion", "v1");
      bound.addProperty("kind", "Pod");
      bound.addProperty("name", name);
      bound.addProperty("uid", uid);
      Files.writeString(
          sa.resolve("token"),
          kube.token(namespace, pod.getSpec().getServiceAccountName(), Duration.ofHours(1), bound));
      Files.copy(kube.caCert(), sa.resolve("ca.crt"));
      Files.writeString(sa.resolve("namespace"), namespace);
      return sa;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** What the kubelet gives every container: the {@code kubernetes} Service's address. */
  private Map<String, String> serviceEnv() {
    return Map.of(
        "KUBERNETES_SERVICE_HOST",
        network.gatewayIp(),
        "KUBERNETES_SERVICE_PORT",
        Integer.toString(kube.port()));
  }

  private String configMapText(V1Pod pod) {
    for (V1Volume v : pod.getSpec().getVolumes()) {
      if (v.getConfigMap() != null) {
        return kube.admin()
            .getJson(
                "/api/v1/namespaces/" + namespace + "/configmaps/" + v.getConfigMap().getName())
            .getAsJsonObject("data")
            .get("etcd.conf.yml")
            .getAsString();
      }
    }
    throw new IllegalStateException("no ConfigMap volume in " + pod.getMetadata().getName());
  }

  private static V1Container container(V1Pod pod, String name) {
    return pod.getSpec().getContainers().stream()
        .filter(c -> c.getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private static boolean probePasses(V1Pod pod, V1Probe probe, ChartPod chartPod) {
    var get = probe.getHttpGet();
    int port =
        get.getPort().isInteger()
            ? get.getPort().getIntValue()
            : pod.getSpec().getContainers().stream()
                .flatMap(c -> c.getPorts().stream())
                .filter(p -> get.getPort().getStrValue().equals(p.getName()))
                .findFirst()
                .orElseThrow()
                .getContainerPort();
    int status = Http.statusOrMinusOne(chartPod.ip(), port, get.getPath());
    return status >= 200 && status < 400;
  }

  /** Every readiness gate's condition is on the Pod and True. */
  private boolean gatesTrue(String name, List<V1PodReadinessGate> gates) {
    JsonObject pod = kube.admin().getJson(podsPath() + "/" + name);
    JsonObject status = pod.getAsJsonObject("status");
    JsonArray conditions =
        status.has("conditions") ? status.getAsJsonArray("conditions") : new JsonArray();
    for (V1PodReadinessGate gate : gates == null ? List.<V1PodReadinessGate>of() : gates) {
      JsonObject c = KubePods.condition(conditions, gate.getConditionType());
      if (c == null || !"True".equals(c.get("status").getAsString())) {
        return false;
      }
    }
    return true;
  }

  private void writeStatus(
      String name,
      String uid,
      String phase,
      ChartPod chartPod,
      boolean containersReady,
      boolean ready,
      List<V1PodReadinessGate> gates) {
    String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    boolean initialized = phase.equals("Running");
    String readyReason =
        !containersReady ? "ContainersNotReady" : ready ? null : "ReadinessGatesNotReady";
    String body =
        """
        {"metadata":{"uid":"%s"},"status":{"phase":"%s","hostIP":"%s","podIP":"%s",
         "podIPs":[{"ip":"%s"}],"startTime":"%s","conditions":[
          {"type":"PodScheduled","status":"True","lastTransitionTime":"%s"},
          {"type":"Initialized","status":"%s","lastTransitionTime":"%s"},
          {"type":"ContainersReady","status":"%s",%s"lastTransitionTime":"%s"},
          {"type":"Ready","status":"%s",%s"lastTransitionTime":"%s"}]}}
        """
            .formatted(
                uid,
                phase,
                network.gatewayIp(),
                chartPod.ip(),
                chartPod.ip(),
                now,
                now,
                initialized ? "True" : "False",
                now,
                containersReady ? "True" : "False",
                containersReady ? "" : "\"reason\":\"ContainersNotReady\",",
                now,
                ready ? "True" : "False",
                readyReason == null ? "" : "\"reason\":\"" + readyReason + "\",",
                now);
    var answer = kube.admin().patchPodStatus(namespace, name, body);
    if (!answer.ok() && exists(name, uid)) {
      throw new IllegalStateException("status of " + name + ": " + answer);
    }
  }

  private boolean exists(String name, String uid) {
    var answer = kube.admin().get(podsPath() + "/" + name);
    return answer.ok()
        && answer.json().getAsJsonObject("metadata").get("uid").getAsString().equals(uid);
  }

  private boolean markedForDeletion(String name, String uid) {
    var answer = kube.admin().get(podsPath() + "/" + name);
    if (!answer.ok()) {
      return answer.status() == 404;
    }
    JsonObject meta = answer.json().getAsJsonObject("metadata");
    return !meta.get("uid").getAsString().equals(uid) || meta.has("deletionTimestamp") || stopped;
  }

  private String podsPath() {
    return "/api/v1/namespaces/" + namespace + "/pods";
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis); // the kubelet's own sync period, not a test's synchronisation
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    stopped = true;
    loop.interrupt();
    pods.values().forEach(ChartPod::close);
  }
}
