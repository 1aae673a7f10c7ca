package io.etcdmemberagent.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The Kubernetes flags: {@code mode} auto, on or off; a kubeconfig (else in-cluster); this Pod's
 * name and namespace (downward API); the condition type prefix; the API call timeout; and how often
 * the Pod is re-read to restore conditions something else removed; how long the local member must
 * be silent before the LocalMemberDown event.
 */
public record KubeSettings(
    String mode,
    Optional<Path> kubeconfig,
    Optional<String> podName,
    Optional<String> podNamespace,
    String conditionPrefix,
    Duration timeout,
    Duration resyncInterval,
    Duration downEventAfter) {}
