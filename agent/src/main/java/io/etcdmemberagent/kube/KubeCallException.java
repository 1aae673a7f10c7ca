package io.etcdmemberagent.kube;

import java.util.List;
import java.util.Map;

/**
 * A call the API server refused ({@code code} and its body) or that got no answer ({@code code} 0,
 * {@code body} the network error).
 */
final class KubeCallException extends Exception {

  private final int code;
  private final String body;
  private final transient Map<String, List<String>> headers;

  KubeCallException(int code, String body, Map<String, List<String>> headers) {
    super(code == 0 ? body : code + ": " + body);
    this.code = code;
    this.body = body;
    this.headers = headers;
  }

  int code() {
    return code;
  }

  String body() {
    return body;
  }

  Map<String, List<String>> headers() {
    return headers;
  }
}
