package io.etcdmemberagent.core.publish;

/**
 * A desired Pod condition of ours, by short name (the full type is {@code <prefix>/<name>}).
 * Positive polarity: {@code TRUE} means healthy.
 */
public record PodCondition(String name, ConditionStatus status, String reason, String message) {}
