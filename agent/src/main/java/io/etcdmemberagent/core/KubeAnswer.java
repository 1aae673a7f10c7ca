package io.etcdmemberagent.core;

import java.time.Duration;

/** The API server's answer to one call, reduced to what the agent acts on. */
public sealed interface KubeAnswer {

  record Done() implements KubeAnswer {}

  /**
   * 409, or 422 on {@code metadata.uid}: the Pod was replaced (its UID differs from the patch's).
   */
  record Conflict(String message) implements KubeAnswer {}

  /**
   * 429 or 503 with a Retry-After, 401 (a token to be re-read), or another failure worth retrying.
   */
  record Retry(Duration after, String message) implements KubeAnswer {}

  /** A failure that retrying as such will not fix (403, 404, 415, 422). */
  record Rejected(int code, String message) implements KubeAnswer {}
}
