package io.etcdmemberagent.kube;

import io.etcdmemberagent.support.Version;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * The few REST calls the adapters make, on the authenticated OkHttp client {@link KubeClients}
 * builds. Our own requests rather than client-java's generated API: its {@code JSON} registers
 * every model class when first touched (about 1,500 classes, 16 % of the agent's), for three kinds
 * of object the agent reads a handful of fields of.
 */
final class KubeHttp {

  static final String STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json";
  static final String MERGE_PATCH = "application/merge-patch+json";
  static final String JSON = "application/json";

  /**
   * Names the agent in the API server's audit log, and as the field manager of what it writes (the
   * server takes the manager from the User-Agent up to its first slash).
   */
  static final String USER_AGENT = "etcd-member-agent/" + Version.current();

  private final OkHttpClient http;
  private final HttpUrl server;

  KubeHttp(OkHttpClient http, HttpUrl server) {
    this.http = http;
    this.server = server;
  }

  /** GET of the object at the path {@code segments}, as maps, lists and scalars. */
  Map<?, ?> get(String... segments) throws KubeCallException {
    String body = call(new Request.Builder().url(url(segments)).get());
    return KubeJson.object(body);
  }

  /** POST or PATCH of a JSON {@code body} of {@code contentType}; the answer's body is not read. */
  void send(String method, String contentType, String body, String... segments)
      throws KubeCallException {
    call(
        new Request.Builder()
            .url(url(segments))
            .method(method, RequestBody.create(body, MediaType.get(contentType))));
  }

  /** POST of a JSON {@code body} that creates an object; the answer's object, as maps. */
  Map<?, ?> create(String body, String... segments) throws KubeCallException {
    return KubeJson.object(
        call(
            new Request.Builder()
                .url(url(segments))
                .post(RequestBody.create(body, MediaType.get(JSON)))));
  }

  private HttpUrl url(String... segments) {
    HttpUrl.Builder url = server.newBuilder();
    for (String s : segments) {
      url.addPathSegment(s);
    }
    return url.build();
  }

  private String call(Request.Builder request) throws KubeCallException {
    Request withHeaders = request.header("Accept", JSON).header("User-Agent", USER_AGENT).build();
    try (Response response = http.newCall(withHeaders).execute()) {
      ResponseBody body = response.body();
      String text = body == null ? "" : body.string();
      if (!response.isSuccessful()) {
        Map<String, List<String>> headers = response.headers().toMultimap();
        throw new KubeCallException(response.code(), text, headers);
      }
      return text;
    } catch (IOException e) {
      throw new KubeCallException(0, e.toString(), Map.of());
    }
  }

  void close() {
    http.dispatcher().executorService().shutdown();
    http.connectionPool().evictAll();
  }
}
