package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A small HTTP client for the agent's endpoints. */
public final class Http {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  public record Answer(int status, String body, String contentType) {}

  private Http() {}

  public static Answer get(int port, String path) {
    return get(port, path, null);
  }

  public static Answer get(int port, String path, String accept) {
    return get("127.0.0.1", port, path, accept);
  }

  public static Answer get(String host, int port, String path, String accept) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path))
            .timeout(Duration.ofSeconds(5));
    if (accept != null) {
      request.header("Accept", accept);
    }
    try {
      HttpResponse<String> r = CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
      return new Answer(
          r.statusCode(), r.body(), r.headers().firstValue("Content-Type").orElse(""));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The status code, or -1 when nothing answers. */
  public static int statusOrMinusOne(int port, String path) {
    return statusOrMinusOne("127.0.0.1", port, path);
  }

  public static int statusOrMinusOne(String host, int port, String path) {
    try {
      return get(host, port, path, null).status();
    } catch (UncheckedIOException e) {
      return -1;
    }
  }
}
