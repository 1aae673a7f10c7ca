package io.etcdmemberagent.testing;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.etcd.jetcd.api.Member;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One release of the chart on the {@link KubeNode}, installed and changed with the real {@code
 * helm} and read as a user reads it (Pods, EndpointSlices, EtcdMembers), plus the member list from
 * etcd itself at the Pods' addresses (this host reaches the Pod network).
 */
public final class ChartRelease {

  public static final Path CHART = KubePods.CHART.toAbsolutePath();
  public static final String PREFIX = KubePods.PREFIX;

  /**
   * {@code <release>-0} starts a new cluster after 5 s without an answer instead of the chart's 30
   * s. A fresh install has no cluster to find, so it waits the whole of it: the tests whose subject
   * is not the first bootstrap set this and save 25 s an install; ChartOnNodeE2E keeps the default.
   */
  public static final String QUICK_BOOTSTRAP = "agent.bootstrapWait=5s";

  /** The agent's port in the chart (HTTPS by default). */
  public static final int AGENT_PORT = 9379;

  private final KubeNode node;
  private final String name;
  private final String namespace;
  private EtcdTestClient client;
  private String scheme;
  private final List<String> baseSets;
  private String readerToken;

  /**
   * A release with etcd's plain traffic ({@code tls.peer.enabled=false}, {@code
   * tls.client.enabled=false}): the tests of scaling, faults and upgrades read etcd with a plain
   * client. {@link #withChartDefaults} runs the chart's defaults (generated TLS).
   */
  public ChartRelease(KubeNode node, String name, String namespace, EtcdTestClient client) {
    this(node, name, namespace, client, "http");
  }

  /** {@code scheme} "https" when the chart serves etcd's client port with TLS (named Secrets). */
  public ChartRelease(
      KubeNode node, String name, String namespace, EtcdTestClient client, String scheme) {
    this(
        node,
        name,
        namespace,
        client,
        scheme,
        scheme.equals("http")
            ? List.of("tls.peer.enabled=false", "tls.client.enabled=false")
            : List.of());
  }

  private ChartRelease(
      KubeNode node,
      String name,
      String namespace,
      EtcdTestClient client,
      String scheme,
      List<String> baseSets) {
    this.node = node;
    this.name = name;
    this.namespace = namespace;
    this.client = client;
    this.scheme = scheme;
    this.baseSets = baseSets;
  }

  /**
   * The chart's defaults: generated TLS. etcd is read over https with the applications' client
   * certificate, once {@link #useApplicationsCertificate} found the Secret join keeps.
   */
  public static ChartRelease withChartDefaults(KubeNode node, String name, String namespace) {
    return new ChartRelease(node, name, namespace, new EtcdTestClient(), "https", List.of());
  }

  /**
   * Reads the Secret {@code <release>-client-tls} (tls.crt, tls.key, ca.crt) into {@code dir}, as
   * an application would, and reads etcd with it from now on (the server checked for {@code
   * localhost}, which the generated server certificates cover besides the Service names).
   */
  public void useApplicationsCertificate(Path dir) {
    String secret = name + "-client-tls";
    Poll.until(
        "the Secret " + secret + " join keeps",
        java.time.Duration.ofMinutes(3),
        () -> node.tool("kubectl", 30, "get", "secret", secret, "-n", namespace).exitCode() == 0);
    Path[] files = new Path[3];
    String[] keys = {"ca.crt", "tls.crt", "tls.key"};
    try {
      for (int i = 0; i < 3; i++) {
        String b64 =
            node.kubectl(
                "get",
                "secret",
                secret,
                "-n",
                namespace,
                "-o",
                "jsonpath={.data." + keys[i].replace(".", "\\.") + "}");
        files[i] = dir.resolve(name + "-app-" + keys[i]);
        java.nio.file.Files.write(files[i], java.util.Base64.getDecoder().decode(b64.strip()));
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    client.close();
    client = EtcdTestClient.withTls(files[0], files[1], files[2], "localhost");
    scheme = "https";
  }

  /** The client reading etcd (closed by whoever made the release, or by {@link #close()}). */
  public EtcdTestClient client() {
    return client;
  }

  public String name() {
    return name;
  }

  public String namespace() {
    return namespace;
  }

  /** Creates the namespace, enforcing the "restricted" Pod Security Standard. */
  public void createRestrictedNamespace() {
    node.kubectl("create", "namespace", namespace);
    node.kubectl("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted");
  }

  /** {@code helm install} with the node's values and {@code sets} (key=value). */
  public void install(String... sets) {
    node.helm(helmArgs("install", sets));
  }

  /** {@code helm upgrade} with the node's values and {@code sets} (key=value). */
  public void upgrade(String... sets) {
    node.helm(helmArgs("upgrade", sets));
  }

  public String[] helmArgs(String command, String... sets) {
    List<String> args =
        new ArrayList<>(
            List.of(
                command, name, CHART.toString(), "-n", namespace, "-f", node.values().toString()));
    for (String s : baseSets) {
      args.addAll(List.of("--set", s));
    }
    for (String s : sets) {
      args.addAll(List.of("--set", s));
    }
    return args.toArray(String[]::new);
  }

  public void uninstall() {
    node.helm("uninstall", name, "-n", namespace, "--wait", "--timeout", "5m");
    if (readerToken != null) {
      node.kubectl("delete", "rolebinding", readerBinding(), "-n", namespace, "--ignore-not-found");
      readerToken = null;
    }
  }

  /**
   * GET {@code path} from the agent at {@code ip} over the chart's default secure serving (HTTPS,
   * the certificate not verified, as the kubelet does), with the token of a ServiceAccount bound to
   * the chart's metrics-reader Role: made on first use, unbound by {@link #uninstall}.
   */
  public HttpsClients.Answer agentGet(String ip, String path) {
    return HttpsClients.get(HttpsClients.anyServer(), ip, AGENT_PORT, path, readerToken());
  }

  /** The token of a ServiceAccount bound to the chart's metrics-reader Role (made on first use). */
  public String readerToken() {
    if (readerToken == null) {
      node.kubectl("create", "serviceaccount", name + "-reader", "-n", namespace);
      node.kubectl(
          "create",
          "rolebinding",
          readerBinding(),
          "-n",
          namespace,
          "--role=" + name + "-metrics-reader",
          "--serviceaccount=" + namespace + ":" + name + "-reader");
      readerToken = node.kubectl("create", "token", name + "-reader", "-n", namespace).strip();
    }
    return readerToken;
  }

  /**
   * Polls {@link #agentGet} on /status until 200: a new binding takes a moment to reach the API
   * server's authorizer, and the agent keeps a refusal for its deny TTL (10 s).
   */
  public void awaitAgentReader(String ip) {
    Poll.until(
        "the reader's token is authorized by the agent at " + ip,
        Duration.ofSeconds(45),
        () -> agentGet(ip, "/status").status() == 200);
  }

  private String readerBinding() {
    return namespace + "-" + name + "-reader";
  }

  public String pod(int ordinal) {
    return name + "-" + ordinal;
  }

  /** The Pods' addresses by name (Pods being deleted left out). */
  public Map<String, String> podIps() {
    Map<String, String> ips = new TreeMap<>();
    for (JsonObject pod : pods()) {
      JsonObject status = pod.getAsJsonObject("status");
      if (status.has("podIP") && !pod.getAsJsonObject("metadata").has("deletionTimestamp")) {
        ips.put(
            pod.getAsJsonObject("metadata").get("name").getAsString(),
            status.get("podIP").getAsString());
      }
    }
    return ips;
  }

  public List<JsonObject> pods() {
    List<JsonObject> out = new ArrayList<>();
    JsonArray items =
        node.admin()
            .getJson(
                "/api/v1/namespaces/"
                    + namespace
                    + "/pods?labelSelector=app.kubernetes.io/instance%3D"
                    + name)
            .getAsJsonArray("items");
    items.forEach(e -> out.add(e.getAsJsonObject()));
    return out;
  }

  /** The Pod, or null. */
  public JsonObject pod(String podName) {
    KubeRest.Answer a = node.admin().get("/api/v1/namespaces/" + namespace + "/pods/" + podName);
    return a.status() == 200 ? a.json() : null;
  }

  public Set<String> readyPods() {
    Set<String> ready = new TreeSet<>();
    for (JsonObject pod : pods()) {
      if ("True".equals(condition(pod, "Ready"))) {
        ready.add(pod.getAsJsonObject("metadata").get("name").getAsString());
      }
    }
    return ready;
  }

  /** The status of the Pod's condition {@code type}, or null. */
  public static String condition(JsonObject pod, String type) {
    JsonArray conditions =
        pod == null ? null : pod.getAsJsonObject("status").getAsJsonArray("conditions");
    JsonObject c = conditions == null ? null : KubePods.condition(conditions, type);
    return c == null ? null : c.get("status").getAsString();
  }

  public String clientUrl(String ip) {
    return scheme + "://" + ip + ":2379";
  }

  /** The member list, from the first Pod whose member answers it. */
  public List<Member> members() {
    for (String ip : podIps().values()) {
      try {
        return client.members(clientUrl(ip), 2000);
      } catch (RuntimeException e) {
        // a learner or a starting member does not answer MemberList: the next one
      }
    }
    throw new IllegalStateException("no member of " + name + " answered MemberList");
  }

  /** Member IDs by name. */
  public Map<String, Long> memberIds() {
    Map<String, Long> ids = new TreeMap<>();
    members().forEach(m -> ids.put(m.getName(), m.getID()));
    return ids;
  }

  /** The Pod a member belongs to: its name, or before it started, its peer URL's first label. */
  public static String podOf(Member m) {
    return m.getName().isEmpty()
        ? java.net.URI.create(m.getPeerURLs(0)).getHost().split("\\.")[0]
        : m.getName();
  }

  /** The Pod IPs of the learners. */
  public Set<String> learnerIps() {
    Map<String, String> ips = podIps();
    Set<String> learners = new TreeSet<>();
    for (Member m : members()) {
      if (m.getIsLearner() && ips.containsKey(podOf(m))) {
        learners.add(ips.get(podOf(m)));
      }
    }
    return learners;
  }

  /** The addresses the client Service's EndpointSlices list as ready. */
  public Set<String> readyEndpoints() {
    Set<String> ready = new TreeSet<>();
    for (JsonElement s :
        node.admin()
            .getJson(
                "/apis/discovery.k8s.io/v1/namespaces/"
                    + namespace
                    + "/endpointslices?labelSelector=kubernetes.io/service-name%3D"
                    + name
                    + "-client")
            .getAsJsonArray("items")) {
      JsonArray endpoints = s.getAsJsonObject().getAsJsonArray("endpoints");
      for (JsonElement ep : endpoints == null ? new JsonArray() : endpoints) {
        JsonObject o = ep.getAsJsonObject();
        if (o.getAsJsonObject("conditions").get("ready").getAsBoolean()) {
          o.getAsJsonArray("addresses").forEach(a -> ready.add(a.getAsString()));
        }
      }
    }
    return ready;
  }

  /** n Pods Ready, and the member list holds n started voters. */
  public void awaitReadyVoters(int n, Duration limit) {
    Poll.until(
        name + ": " + n + " Ready Pods and " + n + " started voters",
        limit,
        () -> {
          if (readyPods().size() != n) {
            return false;
          }
          List<Member> members = members();
          return members.size() == n
              && members.stream().noneMatch(Member::getIsLearner)
              && members.stream().noneMatch(m -> m.getName().isEmpty());
        });
  }

  /**
   * n Pods Ready, each a voter by its agent's condition: for a release whose client port this host
   * cannot verify (TLS certificates name the Pods' DNS names, not their addresses).
   */
  public void awaitReadyVotersByConditions(int n, Duration limit) {
    Poll.until(
        name + ": " + n + " Ready Pods, each a voter by its agent",
        limit,
        () -> {
          List<JsonObject> pods = pods();
          return pods.size() == n
              && pods.stream()
                  .allMatch(
                      p ->
                          "True".equals(condition(p, "Ready"))
                              && "True".equals(condition(p, PREFIX + "voting-member")));
        });
  }

  /** The EtcdMember objects by name. */
  public Map<String, JsonObject> etcdMembers() {
    Map<String, JsonObject> byName = new TreeMap<>();
    for (JsonElement e :
        node.admin()
            .getJson("/apis/etcd-member-agent.io/v1alpha1/namespaces/" + namespace + "/etcdmembers")
            .getAsJsonArray("items")) {
      JsonObject o = e.getAsJsonObject();
      byName.put(o.getAsJsonObject("metadata").get("name").getAsString(), o);
    }
    return byName;
  }

  /** The reasons of the namespace's Events, oldest first. */
  public List<String> eventReasons() {
    List<String> reasons = new ArrayList<>();
    for (JsonElement e :
        node.admin()
            .getJson("/api/v1/namespaces/" + namespace + "/events")
            .getAsJsonArray("items")) {
      reasons.add(e.getAsJsonObject().get("reason").getAsString());
    }
    return reasons;
  }

  /** Pod UIDs by name. */
  public Map<String, String> podUids() {
    Map<String, String> uids = new TreeMap<>();
    for (JsonObject pod : pods()) {
      JsonObject meta = pod.getAsJsonObject("metadata");
      uids.put(meta.get("name").getAsString(), meta.get("uid").getAsString());
    }
    return uids;
  }
}
