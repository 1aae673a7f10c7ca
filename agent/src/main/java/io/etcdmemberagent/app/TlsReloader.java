package io.etcdmemberagent.app;

import io.etcdmemberagent.core.poll.AgentMetrics;
import io.etcdmemberagent.etcd.ClientTls;
import io.etcdmemberagent.support.EventLog;
import io.etcdmemberagent.tls.ClientTlsFiles;
import io.etcdmemberagent.tls.ClientTlsMaterial;
import io.etcdmemberagent.tls.TlsFileException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Re-reads a set of TLS files every {@code interval} (on the poll thread, before a poll): the etcd
 * client's ({@code role} client) or the HTTPS server's ({@code role} serving). An unchanged content
 * hash costs three small reads; a change is loaded as a whole and handed to its user; broken new
 * files leave the last good material in use and are reported (log line once per distinct problem,
 * metric, /status) until they are fixed.
 */
public final class TlsReloader {

  /** Whose files: names the log events, the expiry metric's certificate and the status keys. */
  public static final String CLIENT = "client";

  public static final String SERVING = "serving";

  private final String role;
  private final ClientTlsFiles files;
  private final Consumer<ClientTlsMaterial> user;
  private final AgentMetrics metrics;
  private final Clock clock;
  private final Duration interval;
  private ClientTlsMaterial current;
  private String lastSeenHash;
  private long lastCheckNanos = System.nanoTime();
  private Instant loadedAt;
  private volatile Optional<String> failure = Optional.empty();
  private volatile Map<String, Object> status = Map.of();

  public TlsReloader(
      String role,
      ClientTlsFiles files,
      ClientTlsMaterial initial,
      Consumer<ClientTlsMaterial> user,
      AgentMetrics metrics,
      Clock clock,
      Duration interval) {
    this.role = role;
    this.files = files;
    this.user = user;
    this.metrics = metrics;
    this.clock = clock;
    this.interval = interval;
    this.current = initial;
    this.lastSeenHash = initial.contentHash();
    this.loadedAt = clock.instant();
    publish();
  }

  /** Loads the files at start-up; a bad one stops the start (exit status 2) naming the flag. */
  public static ClientTlsMaterial loadAtStart(ClientTlsFiles files) throws StartupException {
    try {
      return files.load();
    } catch (TlsFileException e) {
      throw new StartupException(e.getMessage(), e);
    }
  }

  public static ClientTls toGateway(ClientTlsMaterial m) {
    return new ClientTls(m.trusted(), m.chain(), m.key());
  }

  /** Checks the files if the interval has passed since the last check. */
  public void checkIfDue() {
    if (System.nanoTime() - lastCheckNanos < interval.toNanos()) {
      return;
    }
    lastCheckNanos = System.nanoTime();
    String hash;
    try {
      hash = files.contentHash();
    } catch (TlsFileException e) {
      fail(e.getMessage());
      return;
    }
    if (hash.equals(lastSeenHash)) {
      if (failure.isPresent() && hash.equals(current.contentHash())) {
        failure = Optional.empty(); // the files are back as they were: nothing to reload
        publish();
      }
      return;
    }
    try {
      ClientTlsMaterial next = files.load();
      user.accept(next);
      current = next;
      lastSeenHash = next.contentHash();
      loadedAt = clock.instant();
      failure = Optional.empty();
      metrics.recordTlsReload("success");
      EventLog.info(
          role + "-tls-reloaded",
          "subject",
          next.certificateSubject().orElse("none"),
          "notAfter",
          next.certificateNotAfter().map(Instant::toString).orElse("none"));
    } catch (TlsFileException | RuntimeException e) {
      lastSeenHash = hash;
      fail(e.getMessage());
    }
    publish();
  }

  private void fail(String problem) {
    metrics.recordTlsReload("failure");
    if (!failure.equals(Optional.of(problem))) {
      EventLog.warn(role + "-tls-reload-failed", "error", problem, "using", "the last good files");
    }
    failure = Optional.of(problem);
    publish();
  }

  private void publish() {
    current.certificateNotAfter().ifPresent(t -> metrics.recordCertificateExpiry(role, t));
    Map<String, Object> s = new LinkedHashMap<>();
    s.put(role + "Subject", current.certificateSubject().orElse(null));
    s.put(role + "NotAfter", current.certificateNotAfter().map(Instant::toString).orElse(null));
    s.put("loadedAt", loadedAt.toString());
    s.put("reloadInterval", io.etcdmemberagent.config.GoDuration.format(interval));
    s.put("reloadFailure", failure.orElse(null));
    status = s;
  }

  /** For /status: the certificate in use and the last reload problem, if any. */
  public Map<String, Object> status() {
    return status;
  }
}
