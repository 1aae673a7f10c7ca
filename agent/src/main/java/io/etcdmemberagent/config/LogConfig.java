package io.etcdmemberagent.config;

/** How the agent logs: {@code format} is text or json; {@code level} debug, info, warn, error. */
public record LogConfig(String format, String level) {}
