package io.etcdmemberagent.core.access;

import java.util.List;
import java.util.Map;

/**
 * The API server's two reviews behind {@code --authz=kube}: who a bearer token is (TokenReview),
 * and whether that user may {@code verb} a non-resource {@code path} (SubjectAccessReview).
 */
public interface AccessReviews {

  TokenAnswer reviewToken(String token);

  PermissionAnswer reviewAccess(Identity who, String path, String verb);

  /** The authenticated user, as the TokenReview's {@code status.user} says. */
  record Identity(String user, String uid, List<String> groups, Map<String, List<String>> extra) {
    public Identity {
      groups = List.copyOf(groups);
      extra = Map.copyOf(extra);
    }
  }

  /** The TokenReview's answer. */
  sealed interface TokenAnswer {
    record Authenticated(Identity identity) implements TokenAnswer {}

    record Rejected(String why) implements TokenAnswer {}

    /** The review itself failed (no answer, a 5xx, or the agent may not create it). */
    record Failed(String why) implements TokenAnswer {}
  }

  /** The SubjectAccessReview's answer. */
  sealed interface PermissionAnswer {
    record Allowed() implements PermissionAnswer {}

    record Denied(String why) implements PermissionAnswer {}

    record Failed(String why) implements PermissionAnswer {}
  }
}
