package io.etcdmemberagent.testing;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * The test's own REST client for a real kube-apiserver: JSON in, JSON out, as a client-certificate
 * user (admin) or with a bearer token. Tests read what the server stored through it, never through
 * the agent's adapter.
 */
public final class KubeRest {

  /** One answer: status code and body (JSON for every API answer, a Status on errors). */
  public record Answer(int status, String body) {
    public JsonObject json() {
      return JsonParser.parseString(body).getAsJsonObject();
    }

    public boolean ok() {
      return status >= 200 && status < 300;
    }
  }

  private final HttpClient http;
  private final String server;
  private final String token;

  private KubeRest(HttpClient http, String server, String token) {
    this.http = http;
    this.server = server;
    this.token = token;
  }

  /** A client-certificate user of {@code server}, trusting {@code ca}. */
  public static KubeRest withCertificate(String server, Path ca, Path cert, Path key) {
    try {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry("user", privateKey(key), new char[0], new Certificate[] {certificate(cert)});
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
      SSLContext ssl = SSLContext.getInstance("TLS");
      ssl.init(kmf.getKeyManagers(), trust(ca), null);
      return new KubeRest(client(ssl), server, null);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (Exception e) {
      throw new IllegalStateException("cannot build a TLS client from " + cert, e);
    }
  }

  /** A bearer-token user (e.g. a ServiceAccount) of the same server. */
  public KubeRest withToken(String bearer, Path ca) {
    try {
      SSLContext ssl = SSLContext.getInstance("TLS");
      ssl.init(null, trust(ca), null);
      return new KubeRest(client(ssl), server, bearer);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static HttpClient client(SSLContext ssl) {
    return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
  }

  private static javax.net.ssl.TrustManager[] trust(Path ca) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setCertificateEntry("ca", certificate(ca));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(store);
    return tmf.getTrustManagers();
  }

  private static Certificate certificate(Path pem) throws Exception {
    try (var in = Files.newInputStream(pem)) {
      return CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static PrivateKey privateKey(Path pem) throws IOException {
    try (Reader reader = Files.newBufferedReader(pem);
        PEMParser parser = new PEMParser(reader)) {
      return new JcaPEMKeyConverter().getPrivateKey((PrivateKeyInfo) parser.readObject());
    }
  }

  public Answer get(String path) {
    return send("GET", path, null, null);
  }

  public Answer post(String path, String json) {
    return send("POST", path, "application/json", json);
  }

  public Answer put(String path, String json) {
    return send("PUT", path, "application/json", json);
  }

  public Answer delete(String path) {
    return send("DELETE", path, null, null);
  }

  /** A PATCH with the given content type (strategic merge, JSON patch, apply ...). */
  public Answer patch(String path, String contentType, String body) {
    return send("PATCH", path, contentType, body);
  }

  /** A strategic merge patch of a Pod's status, as the kubelet writes it. */
  public Answer patchPodStatus(String namespace, String pod, String patch) {
    return patch(
        "/api/v1/namespaces/" + namespace + "/pods/" + pod + "/status",
        "application/strategic-merge-patch+json",
        patch);
  }

  /** Like {@link #get} but fails unless the server answered 2xx. */
  public JsonObject getJson(String path) {
    return must(get(path), "GET " + path);
  }

  public JsonObject postJson(String path, String json) {
    return must(post(path, json), "POST " + path);
  }

  private static JsonObject must(Answer a, String what) {
    if (!a.ok()) {
      throw new IllegalStateException(what + " -> " + a.status() + ": " + a.body());
    }
    return a.json();
  }

  public Answer send(String method, String path, String contentType, String body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(server + path)).timeout(Duration.ofSeconds(10));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      return new Answer(r.statusCode(), r.body());
    } catch (IOException e) {
      throw new UncheckedIOException(method + " " + path, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Streams a watch ({@code path} with {@code watch=1}): every event's JSON to {@code onEvent} on a
   * thread of its own, until closed.
   */
  public AutoCloseable watch(String path, java.util.function.Consumer<JsonObject> onEvent) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server + path)).GET();
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    var future = http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofLines());
    Thread reader =
        new Thread(
            () -> {
              try {
                future
                    .join()
                    .body()
                    .forEach(
                        line -> onEvent.accept(JsonParser.parseString(line).getAsJsonObject()));
              } catch (RuntimeException closed) {
                // cancelled or the server went away: the watch ends
              }
            },
            "watch " + path);
    reader.setDaemon(true);
    reader.start();
    return () -> {
      future.cancel(true);
      future.thenAccept(r -> r.body().close());
      reader.interrupt();
    };
  }

  /** Serializes a Gson tree for a request body. */
  public static String json(JsonElement e) {
    return e.toString();
  }
}
