package io.etcdmemberagent.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * How the agent's own port serves: plain HTTP, or HTTPS from {@code certFile}/{@code keyFile}
 * (re-read every {@code --tls-reload-interval}); which callers may read {@code /metrics} and {@code
 * /status} (a client certificate signed by {@code clientCaFile}, a bearer token Kubernetes
 * authorizes when {@code authz} is {@code kube}); how long access decisions are cached. {@code
 * /livez} and {@code /readyz} stay anonymous.
 */
public record ServingSettings(
    Optional<Path> certFile,
    Optional<Path> keyFile,
    Optional<Path> clientCaFile,
    String authz,
    List<String> tokenAudiences,
    Duration allowTtl,
    Duration denyTtl,
    String attributes) {

  public static final String AUTHZ_OFF = "off";
  public static final String AUTHZ_KUBE = "kube";

  /** {@code get} on {@code etcdmembers/metrics} or {@code /status} in the Pod's namespace. */
  public static final String ATTRIBUTES_RESOURCE = "resource";

  /** {@code get} on the non-resource path, as controller-runtime's secure metrics ask. */
  public static final String ATTRIBUTES_NON_RESOURCE = "non-resource";

  static final List<Flag> FLAGS =
      List.of(
          new Flag(
              "https-cert-file",
              "",
              "PEM serving certificate: serve HTTPS (TLS 1.2+) on --http-port, re-read every"
                  + " --tls-reload-interval (with --https-key-file)"),
          new Flag("https-key-file", "", "PEM private key of --https-cert-file"),
          new Flag(
              "https-client-ca-file",
              "",
              "PEM CA bundle: /metrics and /status also accept a client certificate it signs (for"
                  + " scrapers and load balancers outside Kubernetes)"),
          new Flag(
              "authz",
              AUTHZ_OFF,
              "who may read /metrics and /status: off (anyone, or client certificates only with"
                  + " --https-client-ca-file), kube (a bearer token that passes a TokenReview and a"
                  + " SubjectAccessReview for the path with verb get)"),
          new Flag(
              "authz-token-audiences",
              "",
              "comma list of audiences the TokenReview asks for (default: the API server's)"),
          new Flag("authz-allow-ttl", "2m", "how long an allowed access decision is cached"),
          new Flag("authz-deny-ttl", "10s", "how long a refused access decision is cached"),
          new Flag(
              "authz-attributes",
              ATTRIBUTES_RESOURCE,
              "what the SubjectAccessReview asks: resource (get etcdmembers/metrics or"
                  + " etcdmembers/status in the Pod's namespace, granted by a Role) or non-resource"
                  + " (get the path, granted cluster-wide by a ClusterRole's nonResourceURLs)"));

  /** True when the port serves TLS. */
  public boolean https() {
    return certFile.isPresent();
  }

  /** True when bearer tokens are checked with the API server. */
  public boolean kubeAuthz() {
    return authz.equals(AUTHZ_KUBE);
  }

  /** True when {@code /metrics} and {@code /status} are closed to anonymous callers. */
  public boolean protectsPaths() {
    return kubeAuthz() || clientCaFile.isPresent();
  }

  static ServingSettings parse(FlagValues v) throws ConfigException {
    Optional<Path> cert = v.readableFile("https-cert-file");
    Optional<Path> key = v.readableFile("https-key-file");
    Optional<Path> clientCa = v.readableFile("https-client-ca-file");
    String authz = v.choice("authz", List.of(AUTHZ_OFF, AUTHZ_KUBE));
    if (cert.isPresent() != key.isPresent()) {
      throw new ConfigException("--https-cert-file and --https-key-file must be given together");
    }
    if (clientCa.isPresent() && cert.isEmpty()) {
      throw new ConfigException(
          "--https-client-ca-file needs HTTPS: give --https-cert-file and --https-key-file too");
    }
    if (authz.equals(AUTHZ_KUBE) && cert.isEmpty()) {
      throw new ConfigException(
          "--authz=kube needs HTTPS (bearer tokens are never read over plain HTTP): give"
              + " --https-cert-file and --https-key-file too");
    }
    List<String> audiences =
        Arrays.stream(v.optional("authz-token-audiences").orElse("").split(","))
            .map(String::strip)
            .filter(s -> !s.isEmpty())
            .toList();
    return new ServingSettings(
        cert,
        key,
        clientCa,
        authz,
        audiences,
        v.positiveDuration("authz-allow-ttl"),
        v.positiveDuration("authz-deny-ttl"),
        v.choice("authz-attributes", List.of(ATTRIBUTES_RESOURCE, ATTRIBUTES_NON_RESOURCE)));
  }

  /** True when the SubjectAccessReview asks about the namespace's etcdmembers subresources. */
  public boolean resourceAttributes() {
    return attributes.equals(ATTRIBUTES_RESOURCE);
  }
}
