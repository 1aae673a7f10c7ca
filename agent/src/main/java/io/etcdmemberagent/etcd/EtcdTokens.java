package io.etcdmemberagent.etcd;

import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthenticateRequest;
import io.etcdmemberagent.core.CallFailure;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * The auth token of etcd's password authentication, shared by every endpoint: {@code Authenticate}
 * goes through raft, so a token from one member is valid on all of them, learners included. A
 * learner refuses {@code Authenticate} itself, so the token is asked for through the endpoint being
 * called first, then through the fallback endpoints. A refused password is not tried again until
 * the password file changes or {@link #RETRY_REFUSED_NANOS} passed: each try costs etcd a bcrypt.
 */
final class EtcdTokens {

  static final Metadata.Key<String> TOKEN =
      Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER);

  private static final long RETRY_REFUSED_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final EtcdLogin login;
  private final BiFunction<String, Long, Channel> channels;
  private final java.util.function.Supplier<List<String>> fallbacks;
  private String token;
  private String refusedPassword;
  private StatusRuntimeException refusal;
  private long refusedAt;

  /**
   * {@code channels}: the channel of an endpoint, waiting at most until a nanoTime deadline; {@code
   * fallbacks}: the endpoints to authenticate through when the one called refuses (a learner).
   */
  EtcdTokens(
      EtcdLogin login,
      BiFunction<String, Long, Channel> channels,
      java.util.function.Supplier<List<String>> fallbacks) {
    this.login = login;
    this.channels = channels;
    this.fallbacks = fallbacks;
  }

  /** The current token, authenticating first when there is none; throws etcd's refusal. */
  synchronized String token(String endpoint, long deadlineNanos) {
    if (token != null) {
      return token;
    }
    String password = password();
    if (refusal != null
        && password.equals(refusedPassword)
        && System.nanoTime() - refusedAt < RETRY_REFUSED_NANOS) {
      throw refusal;
    }
    StatusRuntimeException last = null;
    for (String through : candidates(endpoint)) {
      try {
        token = authenticate(through, password, deadlineNanos);
        refusal = null;
        return token;
      } catch (StatusRuntimeException refused) {
        // The RPC that failed is named: this text reaches /readyz and the conditions.
        StatusRuntimeException e =
            refused
                .getStatus()
                .withDescription(
                    "Authenticate as "
                        + login.user()
                        + " via "
                        + through
                        + ": "
                        + description(refused))
                .asRuntimeException();
        last = e;
        CallFailure kind = CallFailure.classify(e.getStatus().getCode().name(), description(e));
        if (kind == CallFailure.AUTHENTICATION_FAILED) {
          refusal = e;
          refusedPassword = password;
          refusedAt = System.nanoTime();
          throw e;
        }
      }
    }
    throw last;
  }

  /** etcd no longer knows the token (expired, or the member restarted): the next call asks anew. */
  synchronized void forget(String stale) {
    if (stale.equals(token)) {
      token = null;
    }
  }

  private List<String> candidates(String endpoint) {
    List<String> all = new java.util.ArrayList<>();
    all.add(endpoint);
    fallbacks.get().stream().filter(e -> !all.contains(e)).forEach(all::add);
    return all;
  }

  private String authenticate(String endpoint, String password, long deadlineNanos) {
    return AuthGrpc.newBlockingStub(channels.apply(endpoint, deadlineNanos))
        .withDeadlineAfter(
            Math.max(1_000_000L, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)
        .authenticate(
            AuthenticateRequest.newBuilder().setName(login.user()).setPassword(password).build())
        .getToken();
  }

  private String password() {
    try {
      String text = Files.readString(login.passwordFile(), StandardCharsets.UTF_8);
      // One trailing line break, as editors and `echo` leave it; nothing else is trimmed.
      String line = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
      return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
    } catch (IOException e) {
      throw Status.UNAUTHENTICATED
          .withDescription(
              "cannot read --password-file " + login.passwordFile() + ": " + e.getMessage())
          .asRuntimeException();
    }
  }

  private static String description(StatusRuntimeException e) {
    return e.getStatus().getDescription() == null ? "" : e.getStatus().getDescription();
  }
}
