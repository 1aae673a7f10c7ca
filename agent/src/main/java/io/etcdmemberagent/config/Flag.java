package io.etcdmemberagent.config;

import java.util.Locale;

/**
 * A command-line flag with its environment twin ({@code ETCD_MEMBER_AGENT_} + upper snake case) and
 * its default ({@code null} when there is none).
 */
public record Flag(String name, String defaultValue, String help) {

  public static final String ENV_PREFIX = "ETCD_MEMBER_AGENT_";

  public String envName() {
    return ENV_PREFIX + name.replace('-', '_').toUpperCase(Locale.ROOT);
  }

  public String display() {
    return "--" + name;
  }
}
