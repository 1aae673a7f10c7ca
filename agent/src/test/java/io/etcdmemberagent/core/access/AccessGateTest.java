package io.etcdmemberagent.core.access;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The gate's answers, and what it asks the API server again and when. */
class AccessGateTest {

  static final Instant T0 = Instant.parse("2026-12-06T00:00:00Z");

  /** Scripted reviews: tokens "reader", "stranger", "expired"; "reader" may get /metrics. */
  static final class Reviews implements AccessReviews {
    final List<String> calls = new ArrayList<>();
    boolean down;

    @Override
    public TokenAnswer reviewToken(String token) {
      calls.add("token " + token);
      if (down) {
        return new TokenAnswer.Failed("connection refused");
      }
      return switch (token) {
        case "reader", "stranger" ->
            new TokenAnswer.Authenticated(
                new Identity(
                    "system:serviceaccount:ns:" + token,
                    "uid-" + token,
                    List.of("system:serviceaccounts"),
                    Map.of()));
        default -> new TokenAnswer.Rejected("token has expired");
      };
    }

    @Override
    public PermissionAnswer reviewAccess(Identity who, String path, String verb) {
      calls.add("access " + who.user() + " " + verb + " " + path);
      if (down) {
        return new PermissionAnswer.Failed("connection refused");
      }
      return who.user().endsWith(":reader") && path.equals("/metrics") && verb.equals("get")
          ? new PermissionAnswer.Allowed()
          : new PermissionAnswer.Denied("no RBAC policy matched");
    }
  }

  final Reviews reviews = new Reviews();
  final AccessGate gate =
      new AccessGate(reviews, t -> "#" + t, Duration.ofMinutes(2), Duration.ofSeconds(10));

  AccessDecision decide(String token, String path, Instant at) {
    return gate.decide(Optional.ofNullable(token), path, "get", at);
  }

  @Test
  void noTokenIsUnauthenticatedWithoutAskingTheServer() {
    assertThat(decide(null, "/metrics", T0)).isInstanceOf(AccessDecision.Unauthenticated.class);
    assertThat(decide(" ", "/metrics", T0)).isInstanceOf(AccessDecision.Unauthenticated.class);
    assertThat(reviews.calls).isEmpty();
  }

  @Test
  void aTokenIsReviewedThenItsUsersAccessToThePathWithTheVerb() {
    assertThat(decide("reader", "/metrics", T0)).isInstanceOf(AccessDecision.Allowed.class);
    assertThat(reviews.calls)
        .containsExactly("token reader", "access system:serviceaccount:ns:reader get /metrics");
    assertThat(decide("reader", "/status", T0))
        .isInstanceOfSatisfying(
            AccessDecision.Forbidden.class,
            f -> assertThat(f.detail()).contains("may not get /status"));
    assertThat(decide("stranger", "/metrics", T0)).isInstanceOf(AccessDecision.Forbidden.class);
    assertThat(decide("expired", "/metrics", T0))
        .isInstanceOfSatisfying(
            AccessDecision.Unauthenticated.class,
            u -> assertThat(u.detail()).contains("token has expired"));
  }

  @Test
  void allowedAnswersLastMinutesAndRefusedOnesSeconds() {
    decide("reader", "/metrics", T0);
    decide("stranger", "/metrics", T0);
    decide("expired", "/metrics", T0);
    reviews.calls.clear();
    Instant later = T0.plusSeconds(9);
    decide("reader", "/metrics", later);
    decide("stranger", "/metrics", later);
    decide("expired", "/metrics", later);
    assertThat(reviews.calls).as("all cached within 9 s").isEmpty();
    Instant afterDenyTtl = T0.plusSeconds(11);
    decide("reader", "/metrics", afterDenyTtl);
    decide("stranger", "/metrics", afterDenyTtl);
    decide("expired", "/metrics", afterDenyTtl);
    assertThat(reviews.calls)
        .as("refusals asked again after 10 s, the allowed reader not")
        .containsExactly("access system:serviceaccount:ns:stranger get /metrics", "token expired");
    reviews.calls.clear();
    decide("reader", "/metrics", T0.plusSeconds(121));
    assertThat(reviews.calls).hasSize(2);
  }

  @Test
  void aFailingApiServerIsUnavailableAndNeverCached() {
    reviews.down = true;
    assertThat(decide("reader", "/metrics", T0)).isInstanceOf(AccessDecision.Unavailable.class);
    reviews.down = false;
    assertThat(decide("reader", "/metrics", T0)).isInstanceOf(AccessDecision.Allowed.class);
    reviews.down = true;
    assertThat(decide("stranger", "/metrics", T0))
        .as("a new token while the server is down")
        .isInstanceOf(AccessDecision.Unavailable.class);
    assertThat(decide("reader", "/metrics", T0))
        .as("an allowed answer still cached")
        .isInstanceOf(AccessDecision.Allowed.class);
  }

  @Test
  void theCacheIsBoundedAndKeepsTheRecentlyUsed() {
    ExpiringCache<String, String> cache = new ExpiringCache<>(2);
    cache.put("a", "1", T0, Duration.ofMinutes(1));
    cache.put("b", "2", T0, Duration.ofMinutes(1));
    assertThat(cache.get("a", T0)).hasValue("1");
    cache.put("c", "3", T0, Duration.ofMinutes(1));
    assertThat(cache.size()).isEqualTo(2);
    assertThat(cache.get("b", T0)).as("the least recently used went").isEmpty();
    assertThat(cache.get("a", T0.plusSeconds(60))).as("ended at its lifetime").isEmpty();
    assertThat(AccessGate.CAPACITY).isPositive();
  }

  @Test
  void tokensAreKeptOnlyAsTheirFingerprint() {
    List<String> seen = new ArrayList<>();
    AccessGate g =
        new AccessGate(
            reviews,
            t -> {
              seen.add(t);
              return "fp";
            },
            Duration.ofMinutes(2),
            Duration.ofSeconds(10));
    g.decide(Optional.of("reader"), "/metrics", "get", T0);
    reviews.calls.clear();
    assertThat(g.decide(Optional.of("stranger"), "/metrics", "get", T0))
        .as("same fingerprint, same cached identity: the cache key is the fingerprint alone")
        .isInstanceOf(AccessDecision.Allowed.class);
    assertThat(seen).containsExactly("reader", "stranger");
  }
}
