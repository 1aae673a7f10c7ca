package io.etcdmemberagent.core.access;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Decides {@code --authz=kube} for one request, the way controller-runtime's secure metrics do: the
 * bearer token must pass a TokenReview, then a SubjectAccessReview for the non-resource path with
 * the lower-cased HTTP method as the verb. Answers are cached, allowed ones for {@code allowTtl},
 * refused ones for {@code denyTtl}, both bounded in count; a review that failed is never cached, so
 * the API server is asked again when it is back. Tokens are kept only as their {@code fingerprint}
 * (a SHA-256, given by the caller: the core does no cryptography).
 */
public final class AccessGate {

  static final int CAPACITY = 4096;

  private final AccessReviews reviews;
  private final UnaryOperator<String> fingerprint;
  private final Duration allowTtl;
  private final Duration denyTtl;
  private final ExpiringCache<String, AccessReviews.TokenAnswer> tokens =
      new ExpiringCache<>(CAPACITY);
  private final ExpiringCache<String, AccessReviews.PermissionAnswer> permissions =
      new ExpiringCache<>(CAPACITY);

  public AccessGate(
      AccessReviews reviews,
      UnaryOperator<String> fingerprint,
      Duration allowTtl,
      Duration denyTtl) {
    this.reviews = reviews;
    this.fingerprint = fingerprint;
    this.allowTtl = allowTtl;
    this.denyTtl = denyTtl;
  }

  public AccessDecision decide(
      Optional<String> bearerToken, String path, String verb, Instant now) {
    if (bearerToken.isEmpty() || bearerToken.get().isBlank()) {
      return new AccessDecision.Unauthenticated(
          "a bearer token is required (Authorization: Bearer <token>)");
    }
    String key = fingerprint.apply(bearerToken.get());
    AccessReviews.TokenAnswer token = tokens.get(key, now).orElse(null);
    if (token == null) {
      token = reviews.reviewToken(bearerToken.get());
      if (token instanceof AccessReviews.TokenAnswer.Authenticated) {
        tokens.put(key, token, now, allowTtl);
      } else if (token instanceof AccessReviews.TokenAnswer.Rejected) {
        tokens.put(key, token, now, denyTtl);
      }
    }
    if (token instanceof AccessReviews.TokenAnswer.Rejected r) {
      return new AccessDecision.Unauthenticated("the token was not accepted: " + r.why());
    }
    if (token instanceof AccessReviews.TokenAnswer.Failed f) {
      return new AccessDecision.Unavailable("the TokenReview failed: " + f.why());
    }
    AccessReviews.TokenAnswer.Authenticated a = (AccessReviews.TokenAnswer.Authenticated) token;
    return authorize(a.identity(), path, verb, now);
  }

  /**
   * The decision from the caches alone, without asking the API server: empty when a review would be
   * needed. A request answered here needs no review capacity.
   */
  public Optional<AccessDecision> cached(
      Optional<String> bearerToken, String path, String verb, Instant now) {
    if (bearerToken.isEmpty() || bearerToken.get().isBlank()) {
      return Optional.of(decide(bearerToken, path, verb, now));
    }
    AccessReviews.TokenAnswer token =
        tokens.get(fingerprint.apply(bearerToken.get()), now).orElse(null);
    if (token instanceof AccessReviews.TokenAnswer.Rejected r) {
      return Optional.of(
          new AccessDecision.Unauthenticated("the token was not accepted: " + r.why()));
    }
    if (token instanceof AccessReviews.TokenAnswer.Authenticated a
        && permissions.get(a.identity() + "|" + verb + "|" + path, now).isPresent()) {
      return Optional.of(authorize(a.identity(), path, verb, now));
    }
    return Optional.empty();
  }

  private AccessDecision authorize(
      AccessReviews.Identity who, String path, String verb, Instant now) {
    String key = who + "|" + verb + "|" + path;
    AccessReviews.PermissionAnswer answer = permissions.get(key, now).orElse(null);
    if (answer == null) {
      answer = reviews.reviewAccess(who, path, verb);
      if (answer instanceof AccessReviews.PermissionAnswer.Allowed) {
        permissions.put(key, answer, now, allowTtl);
      } else if (answer instanceof AccessReviews.PermissionAnswer.Denied) {
        permissions.put(key, answer, now, denyTtl);
      }
    }
    if (answer instanceof AccessReviews.PermissionAnswer.Denied d) {
      return new AccessDecision.Forbidden(
          who.user(),
          "user \""
              + who.user()
              + "\" may not "
              + verb
              + " "
              + path
              + (d.why().isEmpty() ? "" : ": " + d.why()));
    }
    if (answer instanceof AccessReviews.PermissionAnswer.Failed f) {
      return new AccessDecision.Unavailable("the SubjectAccessReview failed: " + f.why());
    }
    return new AccessDecision.Allowed(who.user(), verb + " " + path + " allowed");
  }
}
