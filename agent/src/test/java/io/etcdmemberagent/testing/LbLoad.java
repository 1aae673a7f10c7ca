package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * A steady stream of Kubernetes reads and writes through a load balancer, half GETs and half PUTs
 * of one ConfigMap, each on a new connection (so a TCP balancer spreads the requests as it spreads
 * clients), recording when each started, how long it took and how it ended.
 */
public final class LbLoad implements AutoCloseable {

  /** One request: its start, its latency, its HTTP status (-1: no answer) and what failed. */
  public record Sample(Instant at, long micros, int status, String error) {
    public boolean failed() {
      return status < 200 || status >= 300;
    }
  }

  private static final String PATH = "/api/v1/namespaces/default/configmaps/lb-probe";

  private final String base;
  private final String token;
  private final SSLSocketFactory tls;
  private final List<Sample> samples = new ArrayList<>();
  private final AtomicLong sequence = new AtomicLong();
  private final ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();
  private final ExecutorService workers = Executors.newFixedThreadPool(16);

  public LbLoad(int port, Path ca, String token) {
    this.base = "https://127.0.0.1:" + port;
    this.token = token;
    this.tls = trusting(ca);
  }

  /** Creates the ConfigMap (retrying until the balancer has a server that takes it). */
  public void prepare() {
    Poll.until(
        "the ConfigMap created through the load balancer",
        java.time.Duration.ofSeconds(60),
        () -> {
          int status = send("POST", "/api/v1/namespaces/default/configmaps", body(0)).status();
          return status == 201 || status == 409;
        });
  }

  /** Starts {@code perSecond} requests a second until {@link #close}. */
  public void start(int perSecond) {
    ticks.scheduleAtFixedRate(
        () -> workers.submit(this::one), 0, 1_000_000 / perSecond, TimeUnit.MICROSECONDS);
  }

  private void one() {
    long n = sequence.incrementAndGet();
    Sample s = n % 2 == 0 ? send("GET", PATH, null) : send("PUT", PATH, body(n));
    synchronized (samples) {
      samples.add(s);
    }
  }

  private static String body(long n) {
    return "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"lb-probe\","
        + "\"namespace\":\"default\"},\"data\":{\"n\":\""
        + n
        + "\"}}";
  }

  private Sample send(String method, String path, String body) {
    Instant at = Instant.now();
    long started = System.nanoTime();
    try {
      HttpsURLConnection c = (HttpsURLConnection) URI.create(base + path).toURL().openConnection();
      c.setSSLSocketFactory(tls);
      c.setConnectTimeout(5000);
      c.setReadTimeout(10000);
      c.setRequestMethod(method);
      c.setRequestProperty("Authorization", "Bearer " + token);
      c.setRequestProperty("Connection", "close");
      if (body != null) {
        c.setDoOutput(true);
        c.setRequestProperty("Content-Type", "application/json");
        try (OutputStream out = c.getOutputStream()) {
          out.write(body.getBytes(StandardCharsets.UTF_8));
        }
      }
      int status = c.getResponseCode();
      String error = "";
      try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
        byte[] answer = in == null ? new byte[0] : in.readAllBytes();
        if (status >= 300) {
          error = new String(answer, StandardCharsets.UTF_8);
        }
      }
      c.disconnect();
      return new Sample(at, (System.nanoTime() - started) / 1000, status, error);
    } catch (IOException e) {
      return new Sample(at, (System.nanoTime() - started) / 1000, -1, e.toString());
    }
  }

  public List<Sample> samples() {
    synchronized (samples) {
      return List.copyOf(samples);
    }
  }

  @Override
  public void close() {
    ticks.shutdownNow();
    workers.shutdown();
    try {
      workers.awaitTermination(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    workers.shutdownNow();
  }

  private static SSLSocketFactory trusting(Path ca) {
    try (InputStream in = Files.newInputStream(ca)) {
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      trust.setCertificateEntry(
          "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext ssl = SSLContext.getInstance("TLS");
      ssl.init(null, tmf.getTrustManagers(), null);
      return ssl.getSocketFactory();
    } catch (Exception e) {
      throw new IllegalStateException("cannot trust " + ca, e);
    }
  }
}
