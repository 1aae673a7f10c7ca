package io.etcdmemberagent.core;

import java.time.Duration;

/** The API server's answer to one call, reduced to what the agent acts on. */
public sealed interface KubeAnswer {

  record Done() implements KubeAnswer {}

  /** 409: a precondition failed; the UID differs when the Pod was replaced. */
  record Conflict(String message) implements KubeAnswer {}

  /** 429 or 503 with a Retry-After, or another failure worth retrying later. */
  record Retry(Duration after, String message) implements KubeAnswer {}

  /** A failure that retrying as such will not fix (401, 403, 404, 415, 422). */
  record Rejected(int code, String message) implements KubeAnswer {}
}
