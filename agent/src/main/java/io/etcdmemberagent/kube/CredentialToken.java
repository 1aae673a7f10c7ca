package io.etcdmemberagent.kube;

import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * The bearer token of a kubeconfig's user (its {@code token}, or what its exec plugin or auth
 * provider hands out), asked for again once it is older than {@code refresh}, as client-java's
 * refreshing authentication does.
 */
final class CredentialToken implements Interceptor {

  private final KubeConfig config;
  private final long refreshNanos;
  private String token;
  private long fetchedAt;

  CredentialToken(String token, KubeConfig config, Duration refresh) {
    this.token = token;
    this.config = config;
    this.refreshNanos = refresh.toNanos();
    this.fetchedAt = System.nanoTime();
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    return chain.proceed(
        chain.request().newBuilder().header("Authorization", "Bearer " + current()).build());
  }

  private synchronized String current() {
    if (System.nanoTime() - fetchedAt > refreshNanos) {
      Map<String, String> credentials = config.getCredentials();
      String fresh = credentials == null ? null : credentials.get(KubeConfig.CRED_TOKEN_KEY);
      if (fresh != null && !fresh.isEmpty()) {
        token = fresh;
      }
      fetchedAt = System.nanoTime();
    }
    return token;
  }
}
