package io.etcdmemberagent.kube;

import com.google.gson.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The Secrets {@code join} keeps when the chart generates the cluster's TLS: read one by name,
 * create one (never overwriting: a 409 means another member created it first), replace one at the
 * version read. Needs {@code get} and {@code update} on those names, and {@code create}.
 */
public final class ClientJavaSecretApi {

  /** A Secret's data (decoded) and the version it was read at. */
  public record SecretData(Map<String, String> data, String resourceVersion) {}

  /** A call the API server refused or did not answer; {@code code} 0 when unanswered. */
  public static final class SecretCallException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int code;

    SecretCallException(String message, int code) {
      super(message);
      this.code = code;
    }

    public int code() {
      return code;
    }
  }

  private final KubeHttp api;
  private final String namespace;

  public ClientJavaSecretApi(ClientJavaPodApi pods) {
    this.api = pods.http();
    this.namespace = pods.namespace();
  }

  /** The Secret {@code name}, or empty when there is none. */
  public Optional<SecretData> read(String name) throws SecretCallException {
    try {
      Map<?, ?> secret = api.get("api", "v1", "namespaces", namespace, "secrets", name);
      Map<String, String> data = new LinkedHashMap<>();
      KubeJson.map(secret.get("data"))
          .forEach(
              (k, v) ->
                  data.put(
                      k.toString(),
                      new String(
                          Base64.getDecoder().decode(KubeJson.text(v)), StandardCharsets.UTF_8)));
      String version = KubeJson.text(KubeJson.map(secret.get("metadata")).get("resourceVersion"));
      return Optional.of(new SecretData(Map.copyOf(data), version));
    } catch (KubeCallException e) {
      if (e.code() == 404) {
        return Optional.empty();
      }
      throw failed("read", name, e);
    } catch (IllegalArgumentException e) {
      throw new SecretCallException("Secret " + name + " holds data that is not base64: " + e, 0);
    }
  }

  /** Creates {@code name} with {@code data}; false when it exists already (409). */
  public boolean create(String name, Map<String, String> data, Map<String, String> labels)
      throws SecretCallException {
    try {
      api.create(body(name, data, labels, null), "api", "v1", "namespaces", namespace, "secrets");
      return true;
    } catch (KubeCallException e) {
      if (e.code() == 409) {
        return false;
      }
      throw failed("create", name, e);
    }
  }

  /** Replaces {@code name}'s data at {@code resourceVersion}; false on a conflict (409). */
  public boolean replace(
      String name, Map<String, String> data, Map<String, String> labels, String resourceVersion)
      throws SecretCallException {
    try {
      api.send(
          "PUT",
          KubeHttp.JSON,
          body(name, data, labels, resourceVersion),
          "api",
          "v1",
          "namespaces",
          namespace,
          "secrets",
          name);
      return true;
    } catch (KubeCallException e) {
      if (e.code() == 409) {
        return false;
      }
      throw failed("replace", name, e);
    }
  }

  private static String body(
      String name, Map<String, String> data, Map<String, String> labels, String resourceVersion) {
    JsonObject metadata = new JsonObject();
    metadata.addProperty("name", name);
    if (resourceVersion != null) {
      metadata.addProperty("resourceVersion", resourceVersion);
    }
    JsonObject labelObject = new JsonObject();
    labels.forEach(labelObject::addProperty);
    metadata.add("labels", labelObject);
    JsonObject encoded = new JsonObject();
    data.forEach(
        (k, v) ->
            encoded.addProperty(
                k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
    JsonObject secret = new JsonObject();
    secret.addProperty("apiVersion", "v1");
    secret.addProperty("kind", "Secret");
    secret.add("metadata", metadata);
    secret.addProperty("type", "Opaque");
    secret.add("data", encoded);
    return secret.toString();
  }

  private static SecretCallException failed(String verb, String name, KubeCallException e) {
    return new SecretCallException(
        "cannot "
            + verb
            + " Secret "
            + name
            + ": "
            + (e.code() == 0
                ? e.body()
                : e.code() + " " + KubeJson.object(e.body()).get("message")),
        e.code());
  }
}
