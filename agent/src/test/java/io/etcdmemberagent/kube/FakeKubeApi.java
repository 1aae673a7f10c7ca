package io.etcdmemberagent.kube;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Kubernetes API stand-in with the real semantics of exactly the calls the agent makes: GET a
 * Pod; PATCH {@code pods/status} as a strategic merge patch (conditions merged by {@code type},
 * field by field, {@code null} deletes a field, other entries untouched; any other patch type 415);
 * {@code metadata.uid} of another Pod refused as the real server does (422 Invalid, field is
 * immutable); resourceVersion bumps; POST events; a bearer token. Faults are scriptable: status
 * codes with Retry-After, delays, and the whole server down. Every request is recorded.
 */
public final class FakeKubeApi implements AutoCloseable {

  public static final String TOKEN = "test-token-" + UUID.randomUUID();
  private static final Pattern POD =
      Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/]+)(/status)?");
  private static final Pattern EVENTS = Pattern.compile("/api/v1/namespaces/([^/]+)/events");

  /** One request as the stand-in saw it; {@code atNanos} is when it arrived. */
  public record Request(
      String method,
      String path,
      String contentType,
      String body,
      int status,
      long atNanos,
      boolean delayed) {}

  /** A scripted answer: a status code, an optional Retry-After (seconds), a delay. */
  public record Fault(int status, int retryAfterSeconds, Duration delay) {}

  private final Gson gson = new GsonBuilder().serializeNulls().create();
  private final Map<String, JsonObject> pods = new ConcurrentHashMap<>();
  private final List<Request> requests = new ArrayList<>();
  private final List<JsonObject> events = new ArrayList<>();
  private final List<JsonArray> conditionHistory = new ArrayList<>();
  private final List<StatusPatch> statusPatches = new ArrayList<>();
  private final Deque<Fault> faults = new ArrayDeque<>();
  private final int port;
  private final String host;
  private HttpServer server;
  private long resourceVersion = 1000;

  public FakeKubeApi() {
    this("127.0.0.1");
  }

  /** Listening on {@code host} (an address other processes, e.g. in network namespaces, reach). */
  public FakeKubeApi(String host) {
    this.host = host;
    this.server = bind(0);
    this.port = server.getAddress().getPort();
  }

  private HttpServer bind(int port) {
    try {
      HttpServer s =
          HttpServer.create(new InetSocketAddress(InetAddress.getByName(host), port), 50);
      s.createContext("/", this::handle);
      s.setExecutor(Executors.newFixedThreadPool(4));
      s.start();
      return s;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String url() {
    return "http://" + host + ":" + port;
  }

  /** A kubeconfig file for this stand-in, with the bearer token. */
  public Path writeKubeconfig(Path dir) {
    String yaml =
        "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
            + "clusters:\n- name: test\n  cluster:\n    server: "
            + url()
            + "\n"
            + "users:\n- name: test\n  user:\n    token: "
            + TOKEN
            + "\n"
            + "contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n    namespace: default\n";
    try {
      return Files.writeString(dir.resolve("kubeconfig"), yaml);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Creates (or replaces, with a new UID and no conditions) a Pod; returns its UID. */
  public synchronized String createPod(String namespace, String name) {
    String uid = UUID.randomUUID().toString();
    JsonObject pod = new JsonObject();
    pod.addProperty("apiVersion", "v1");
    pod.addProperty("kind", "Pod");
    JsonObject meta = new JsonObject();
    meta.addProperty("name", name);
    meta.addProperty("namespace", namespace);
    meta.addProperty("uid", uid);
    meta.addProperty("generation", 1);
    meta.addProperty("resourceVersion", Long.toString(++resourceVersion));
    pod.add("metadata", meta);
    JsonObject status = new JsonObject();
    JsonArray conditions = new JsonArray();
    conditions.add(condition("Ready", "False", null));
    conditions.add(condition("ContainersReady", "False", null));
    status.add("conditions", conditions);
    pod.add("status", status);
    pods.put(namespace + "/" + name, pod);
    return uid;
  }

  private static JsonObject condition(String type, String status, String reason) {
    JsonObject c = new JsonObject();
    c.addProperty("type", type);
    c.addProperty("status", status);
    if (reason != null) {
      c.addProperty("reason", reason);
    }
    return c;
  }

  public synchronized JsonObject pod(String namespace, String name) {
    return pods.get(namespace + "/" + name).deepCopy();
  }

  public synchronized JsonArray conditions(String namespace, String name) {
    return pods.get(namespace + "/" + name)
        .getAsJsonObject("status")
        .getAsJsonArray("conditions")
        .deepCopy();
  }

  /** Something else (a person, another controller) removes a condition. */
  /** Replaces a Pod's conditions (what the kubelet and others wrote before the agent). */
  public synchronized void setConditions(String namespace, String name, JsonArray conditions) {
    pods.get(namespace + "/" + name)
        .getAsJsonObject("status")
        .add("conditions", conditions.deepCopy());
  }

  public synchronized void removeCondition(String namespace, String name, String type) {
    JsonArray conditions =
        pods.get(namespace + "/" + name).getAsJsonObject("status").getAsJsonArray("conditions");
    for (int i = conditions.size() - 1; i >= 0; i--) {
      if (conditions.get(i).getAsJsonObject().get("type").getAsString().equals(type)) {
        conditions.remove(i);
      }
    }
  }

  public synchronized void addFault(Fault fault) {
    faults.addLast(fault);
  }

  public synchronized void clearFaults() {
    faults.clear();
  }

  /** The API server goes away: connections are refused. */
  public synchronized void down() {
    server.stop(0);
  }

  /** ... and comes back on the same port. */
  public synchronized void up() {
    server = bind(port);
  }

  /** Every request so far, in the order they arrived. */
  public synchronized List<Request> requests() {
    List<Request> sorted = new ArrayList<>(requests);
    sorted.sort(java.util.Comparator.comparingLong(Request::atNanos));
    return sorted;
  }

  public synchronized List<JsonObject> events() {
    return List.copyOf(events);
  }

  /** What one successful status patch found and left. */
  public record StatusPatch(JsonArray before, JsonArray after) {}

  /** Every successful status patch, in order, with the conditions before and after it. */
  public synchronized List<StatusPatch> statusPatches() {
    return List.copyOf(statusPatches);
  }

  /** The Pod's conditions after each successful status patch, in order. */
  public synchronized List<JsonArray> conditionHistory() {
    return List.copyOf(conditionHistory);
  }

  private void handle(HttpExchange ex) throws IOException {
    long arrived = System.nanoTime();
    String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    String contentType = ex.getRequestHeaders().getFirst("Content-Type");
    Fault fault;
    synchronized (this) {
      fault = faults.pollFirst();
    }
    int status;
    String answer;
    if (fault != null) {
      if (!fault.delay().isZero()) {
        try {
          Thread.sleep(fault.delay().toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      status = fault.status();
      answer = statusBody(status, "Injected", "injected fault " + status);
      if (fault.retryAfterSeconds() > 0) {
        ex.getResponseHeaders().add("Retry-After", Integer.toString(fault.retryAfterSeconds()));
      }
    } else {
      Object[] result =
          route(
              ex.getRequestMethod(),
              ex.getRequestURI().getPath(),
              contentType,
              ex.getRequestHeaders().getFirst("Authorization"),
              body);
      status = (int) result[0];
      answer = (String) result[1];
    }
    synchronized (this) {
      requests.add(
          new Request(
              ex.getRequestMethod(),
              ex.getRequestURI().getPath(),
              contentType,
              body,
              status,
              arrived,
              fault != null && !fault.delay().isZero()));
    }
    byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(status, bytes.length);
    ex.getResponseBody().write(bytes);
    ex.close();
  }

  private synchronized Object[] route(
      String method, String path, String contentType, String auth, String body) {
    if (!("Bearer " + TOKEN).equals(auth)) {
      return new Object[] {401, statusBody(401, "Unauthorized", "Unauthorized")};
    }
    Matcher pod = POD.matcher(path);
    if (pod.matches()) {
      JsonObject object = pods.get(pod.group(1) + "/" + pod.group(2));
      if (object == null) {
        return new Object[] {
          404, statusBody(404, "NotFound", "pods \"" + pod.group(2) + "\" not found")
        };
      }
      if (method.equals("GET") && pod.group(3) == null) {
        return new Object[] {200, gson.toJson(object)};
      }
      if (method.equals("PATCH") && pod.group(3) != null) {
        return patchStatus(object, contentType, body);
      }
      return new Object[] {405, statusBody(405, "MethodNotAllowed", method + " not allowed")};
    }
    Matcher ev = EVENTS.matcher(path);
    if (ev.matches() && method.equals("POST")) {
      JsonObject event = JsonParser.parseString(body).getAsJsonObject();
      events.add(event);
      return new Object[] {201, gson.toJson(event)};
    }
    return new Object[] {
      404, statusBody(404, "NotFound", "the server could not find the requested resource")
    };
  }

  private Object[] patchStatus(JsonObject pod, String contentType, String body) {
    if (contentType == null || !contentType.startsWith("application/strategic-merge-patch+json")) {
      return new Object[] {
        415,
        statusBody(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
      };
    }
    JsonObject patch = JsonParser.parseString(body).getAsJsonObject();
    String uid = pod.getAsJsonObject("metadata").get("uid").getAsString();
    if (patch.has("metadata") && patch.getAsJsonObject("metadata").has("uid")) {
      String wanted = patch.getAsJsonObject("metadata").get("uid").getAsString();
      if (!wanted.equals(uid)) {
        // What the real server answers (checked by PodStatusDifferentialIT): the patched object
        // would carry another UID, and metadata.uid is immutable.
        return new Object[] {
          422,
          statusBody(
              422,
              "Invalid",
              "Pod \""
                  + pod.getAsJsonObject("metadata").get("name").getAsString()
                  + "\" is invalid: metadata.uid: Invalid value: \""
                  + wanted
                  + "\": field is immutable")
        };
      }
    }
    if (patch.has("status") && patch.getAsJsonObject("status").has("conditions")) {
      JsonArray before = pod.getAsJsonObject("status").getAsJsonArray("conditions").deepCopy();
      JsonArray existing =
          mergeByType(before, patch.getAsJsonObject("status").getAsJsonArray("conditions"));
      pod.getAsJsonObject("status").add("conditions", existing);
      conditionHistory.add(existing.deepCopy());
      statusPatches.add(new StatusPatch(before, existing.deepCopy()));
    }
    pod.getAsJsonObject("metadata")
        .addProperty("resourceVersion", Long.toString(++resourceVersion));
    return new Object[] {200, gson.toJson(pod)};
  }

  /**
   * A strategic merge of a list keyed by {@code type}, as the real API server does it (checked by
   * {@code PodStatusDifferentialIT}): each patch entry merged field by field into its namesake
   * ({@code null} deletes a field) or added; then the patch's entries (in patch order) and the
   * untouched ones (in stored order) are interleaved by their stored position, new entries first; a
   * new entry gets {@code lastProbeTime: null} as the server's serialization has it.
   */
  static JsonArray mergeByType(JsonArray stored, JsonArray patchEntries) {
    List<String> storedOrder = new ArrayList<>();
    stored.forEach(e -> storedOrder.add(type(e)));
    List<JsonObject> patched = new ArrayList<>();
    for (JsonElement p : patchEntries) {
      JsonObject entry = p.getAsJsonObject();
      int at = storedOrder.indexOf(type(entry));
      JsonObject merged;
      if (at >= 0) {
        merged = stored.get(at).getAsJsonObject().deepCopy();
      } else {
        merged = new JsonObject();
        merged.add("lastProbeTime", JsonNull.INSTANCE);
      }
      for (Map.Entry<String, JsonElement> field : entry.entrySet()) {
        if (field.getValue() instanceof JsonNull) {
          merged.remove(field.getKey());
        } else {
          merged.add(field.getKey(), field.getValue());
        }
      }
      patched.add(merged);
    }
    List<String> patchTypes = patched.stream().map(FakeKubeApi::type).toList();
    List<JsonObject> untouched = new ArrayList<>();
    stored.forEach(
        e -> {
          if (!patchTypes.contains(type(e))) {
            untouched.add(e.getAsJsonObject());
          }
        });
    JsonArray out = new JsonArray();
    int i = 0;
    int j = 0;
    while (i < patched.size() && j < untouched.size()) {
      if (storedOrder.indexOf(type(patched.get(i))) < storedOrder.indexOf(type(untouched.get(j)))) {
        out.add(patched.get(i++));
      } else {
        out.add(untouched.get(j++));
      }
    }
    patched.subList(i, patched.size()).forEach(out::add);
    untouched.subList(j, untouched.size()).forEach(out::add);
    return out;
  }

  private static String type(JsonElement condition) {
    return condition.getAsJsonObject().get("type").getAsString();
  }

  private String statusBody(int code, String reason, String message) {
    JsonObject s = new JsonObject();
    s.addProperty("kind", "Status");
    s.addProperty("apiVersion", "v1");
    s.addProperty("status", "Failure");
    s.addProperty("message", message);
    s.addProperty("reason", reason);
    s.addProperty("code", code);
    return gson.toJson(s);
  }

  @Override
  public synchronized void close() {
    server.stop(0);
  }
}
