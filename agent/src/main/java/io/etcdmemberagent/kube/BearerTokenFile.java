package io.etcdmemberagent.kube;

import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * A bearer token that its owner rotates on disk (the kubelet's projected ServiceAccount token, a
 * kubeconfig's {@code tokenFile}), read for every request. client-java reads a kubeconfig's {@code
 * tokenFile} once and the in-cluster token at most once a minute, so a token replaced after its
 * predecessor was revoked (its Pod deleted) or expired would be refused for up to a minute or for
 * ever. The agent's requests are few (writes only on change), so reading a small file each time
 * costs nothing.
 */
final class BearerTokenFile implements Interceptor {

  static final Path IN_CLUSTER = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token");

  private final Path file;

  BearerTokenFile(Path file) {
    this.file = file;
  }

  Path file() {
    return file;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    String token;
    try {
      token = Files.readString(file, StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      throw new IOException("cannot read the bearer token file " + file + ": " + e, e);
    }
    return chain.proceed(
        chain.request().newBuilder().header("Authorization", "Bearer " + token).build());
  }

  /** The current user's {@code tokenFile} of a kubeconfig (relative to the kubeconfig's folder). */
  static Optional<BearerTokenFile> of(KubeConfig config, Path kubeconfig) {
    String user = null;
    for (Object c : config.getContexts()) {
      Map<?, ?> context = (Map<?, ?>) c;
      if (String.valueOf(context.get("name")).equals(config.getCurrentContext())
          && context.get("context") instanceof Map<?, ?> body) {
        user = String.valueOf(body.get("user"));
      }
    }
    for (Object u : config.getUsers() == null ? List.of() : config.getUsers()) {
      Map<?, ?> entry = (Map<?, ?>) u;
      if (String.valueOf(entry.get("name")).equals(user)
          && entry.get("user") instanceof Map<?, ?> body
          && body.get("tokenFile") instanceof String path) {
        Path folder = kubeconfig.toAbsolutePath().getParent();
        return Optional.of(new BearerTokenFile(folder.resolve(path)));
      }
    }
    return Optional.empty();
  }
}
