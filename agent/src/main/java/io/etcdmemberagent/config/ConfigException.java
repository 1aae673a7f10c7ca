package io.etcdmemberagent.config;

/** Bad configuration input; its message is the one line shown to the user (exit status 2). */
public final class ConfigException extends Exception {
  public ConfigException(String message) {
    super(message);
  }
}
