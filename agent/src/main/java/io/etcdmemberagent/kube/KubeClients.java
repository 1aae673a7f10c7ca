package io.etcdmemberagent.kube;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;

/**
 * A client-java {@link ApiClient} as every adapter here uses it: from a kubeconfig or in-cluster,
 * the token file re-read per request, connect/read/write timeouts (client-java's read timeout is
 * infinite by default) and no silent retries.
 */
final class KubeClients {

  private KubeClients() {}

  static ApiClient connect(Optional<Path> kubeconfig, Duration timeout) throws IOException {
    ApiClient client;
    Optional<BearerTokenFile> tokenFile;
    if (kubeconfig.isPresent()) {
      try (Reader reader = Files.newBufferedReader(kubeconfig.get(), StandardCharsets.UTF_8)) {
        KubeConfig config = KubeConfig.loadKubeConfig(reader);
        tokenFile = BearerTokenFile.of(config, kubeconfig.get());
        client = ClientBuilder.kubeconfig(config).build();
      }
    } else {
      client = ClientBuilder.cluster().build();
      tokenFile = Optional.of(new BearerTokenFile(BearerTokenFile.IN_CLUSTER));
    }
    long millis = timeout.toMillis();
    OkHttpClient.Builder http = client.getHttpClient().newBuilder();
    // Added last, so it runs after client-java's own (cached) token and replaces it.
    tokenFile.ifPresent(http::addInterceptor);
    client.setHttpClient(
        http.connectTimeout(millis, TimeUnit.MILLISECONDS)
            .readTimeout(millis, TimeUnit.MILLISECONDS)
            .writeTimeout(millis, TimeUnit.MILLISECONDS)
            .callTimeout(millis * 2, TimeUnit.MILLISECONDS)
            // The publishers retry with backoff and Retry-After; no silent retries below them.
            .retryOnConnectionFailure(false)
            .build());
    return client;
  }

  static void close(ApiClient client) {
    client.getHttpClient().dispatcher().executorService().shutdown();
    client.getHttpClient().connectionPool().evictAll();
  }
}
