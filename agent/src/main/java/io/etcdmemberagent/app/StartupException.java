package io.etcdmemberagent.app;

/**
 * Start-up of {@code run} or {@code join} failed in a way the configuration explains (exit status
 * 2).
 */
public final class StartupException extends Exception {
  public StartupException(String message, Throwable cause) {
    super(message, cause);
  }
}
