package io.etcdmemberagent.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Kubernetes flags: {@code mode} auto, on or off; a kubeconfig (else in-cluster); this Pod's
 * name and namespace (downward API); the condition type prefix (also the API group of the
 * EtcdMember resource); the API call timeout; whether to keep an EtcdMember ({@code memberResource}
 * auto, on or off); how often the Pod is re-read to restore conditions something else removed; how
 * long the local member must be silent before the LocalMemberDown event.
 */
public record KubeSettings(
    String mode,
    Optional<Path> kubeconfig,
    Optional<String> podName,
    Optional<String> podNamespace,
    String conditionPrefix,
    Duration timeout,
    Duration resyncInterval,
    Duration downEventAfter,
    String memberResource) {

  /** The flags {@code run} and {@code join} share. */
  static final List<Flag> SHARED_FLAGS =
      List.of(
          new Flag(
              "kube",
              "auto",
              "publish to Kubernetes: auto (in a Pod or with a kubeconfig), on, off"),
          new Flag("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else in-cluster)"),
          new Flag("pod-name", "", "this Pod's name (default: $POD_NAME, from the downward API)"),
          new Flag(
              "pod-namespace", "", "this Pod's namespace (default: $POD_NAMESPACE, downward API)"),
          new Flag(
              "condition-prefix",
              "etcd-member-agent.io",
              "prefix of our Pod condition types and API group of the EtcdMember resource"),
          new Flag("kube-timeout", "5s", "timeout of every Kubernetes API call"),
          new Flag(
              "member-resource",
              "auto",
              "keep this member's EtcdMember object: auto (when its CRD is served), on, off"));

  /** Kubernetes object names: a DNS subdomain (Pods) and a DNS label (namespaces). */
  private static final String DNS_SUBDOMAIN = "(?=.{1,253}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?";

  private static final String DNS_LABEL = "(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?";

  /** The shared flags, with the run-only intervals given. */
  static KubeSettings parse(
      FlagValues v, Map<String, String> env, Duration resyncInterval, Duration downEventAfter)
      throws ConfigException {
    String prefix = v.string("condition-prefix");
    if (!prefix.matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?")) {
      throw new ConfigException(
          "invalid value \""
              + prefix
              + "\" for --condition-prefix: expected a DNS subdomain"
              + " such as etcd-member-agent.io");
    }
    Optional<String> kubeconfig =
        v.optional("kubeconfig").or(() -> Optional.ofNullable(env.get("KUBECONFIG")));
    if (kubeconfig.isPresent() && !java.nio.file.Files.isReadable(Path.of(kubeconfig.get()))) {
      throw new ConfigException(
          "invalid value \"" + kubeconfig.get() + "\" for --kubeconfig: no such readable file");
    }
    return new KubeSettings(
        v.choice("kube", List.of("auto", "on", "off")),
        kubeconfig.map(Path::of),
        v.optionalMatching("pod-name", DNS_SUBDOMAIN, "a Pod name (a DNS subdomain)")
            .or(() -> nonBlank(env.get("POD_NAME"))),
        v.optionalMatching("pod-namespace", DNS_LABEL, "a namespace name (a DNS label)")
            .or(() -> nonBlank(env.get("POD_NAMESPACE"))),
        prefix,
        v.positiveDuration("kube-timeout"),
        resyncInterval,
        downEventAfter,
        v.choice("member-resource", List.of("auto", "on", "off")));
  }

  private static Optional<String> nonBlank(String s) {
    return s == null || s.isBlank() ? Optional.empty() : Optional.of(s.trim());
  }
}
