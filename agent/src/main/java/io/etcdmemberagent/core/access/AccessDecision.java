package io.etcdmemberagent.core.access;

/**
 * Whether a caller may read a protected path ({@code /metrics}, {@code /status}), as HTTP answers
 * it: 200, 401, 403 or 503.
 */
public sealed interface AccessDecision {

  /** Why, for the log and the answer's body. */
  String detail();

  /** {@code who}: the authenticated user or the client certificate's subject. */
  record Allowed(String who, String detail) implements AccessDecision {}

  /** No credential, or one the API server (or the client CA) does not accept: 401. */
  record Unauthenticated(String detail) implements AccessDecision {}

  /** An authenticated caller without permission for the path: 403. */
  record Forbidden(String who, String detail) implements AccessDecision {}

  /** The API server could not decide (down, or refused the review itself): 503. */
  record Unavailable(String detail) implements AccessDecision {}
}
