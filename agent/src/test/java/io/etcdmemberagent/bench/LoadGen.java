package io.etcdmemberagent.bench;

import io.etcdmemberagent.testing.HttpsClients;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.net.ssl.SSLSocket;

/**
 * A second process that sends GETs at a fixed rate over a few keep-alive HTTP/1.1 connections and
 * prints latency percentiles, each measured from the request's intended send time, so a stall
 * counts against the server instead of slowing the load down. Arguments: URL, requests per second,
 * seconds. An {@code https} URL is served over TLS (any server certificate, the handshake once per
 * connection, as a scraper that keeps its connection); {@code LOADGEN_BEARER_TOKEN} in the
 * environment is sent as a bearer token. Prints {@code p50 p99 max sent errors}, times in ms; an
 * answer other than 200 counts as an error, not as a latency.
 */
public final class LoadGen {

  private static final int CONNECTIONS = 10;

  private LoadGen() {}

  public static void main(String[] args) throws Exception {
    URI uri = URI.create(args[0]);
    int rate = Integer.parseInt(args[1]);
    int seconds = Integer.parseInt(args[2]);
    long perConnectionPeriod = 1_000_000_000L * CONNECTIONS / rate;
    long total = (long) rate * seconds / CONNECTIONS;
    ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
    AtomicLong errors = new AtomicLong();
    String token = System.getenv("LOADGEN_BEARER_TOKEN");
    byte[] request =
        ("GET "
                + uri.getRawPath()
                + " HTTP/1.1\r\nHost: "
                + uri.getHost()
                + "\r\nAccept: */*\r\n"
                + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
                + "\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    // the connections are opened (and their TLS handshakes done) with one request each before the
    // schedule starts: a cold client's first handshakes took ~300 ms, which delayed every request
    // queued behind them and made the p99 of an HTTPS run the client's start-up
    Socket[] opened = new Socket[CONNECTIONS];
    for (int c = 0; c < CONNECTIONS; c++) {
      opened[c] = connect(uri);
      exchange(opened[c], request);
    }
    long start = System.nanoTime() + 200_000_000L;
    List<Thread> workers = new ArrayList<>();
    for (int c = 0; c < CONNECTIONS; c++) {
      long offset = perConnectionPeriod * c / CONNECTIONS;
      Socket first = opened[c];
      Thread t =
          new Thread(
              () -> {
                Socket socket = first;
                for (long i = 0; i < total; i++) {
                  long intended = start + offset + i * perConnectionPeriod;
                  long wait = intended - System.nanoTime();
                  if (wait > 0) {
                    LockSupport.parkNanos(wait);
                  }
                  try {
                    if (socket == null) {
                      socket = connect(uri);
                    }
                    if (exchange(socket, request) == 200) {
                      latencies.add(System.nanoTime() - intended);
                    } else {
                      errors.incrementAndGet();
                    }
                  } catch (IOException e) {
                    errors.incrementAndGet();
                    socket = null;
                  }
                }
              });
      workers.add(t);
      t.start();
    }
    for (Thread t : workers) {
      t.join();
    }
    long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
    System.out.println(
        String.format(
            Locale.ROOT,
            "%.3f %.3f %.3f %d %d",
            percentile(sorted, 0.50),
            percentile(sorted, 0.99),
            sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1] / 1e6,
            total * CONNECTIONS,
            errors.get()));
  }

  private static Socket connect(URI uri) throws IOException {
    if (!uri.getScheme().equals("https")) {
      Socket socket = new Socket(uri.getHost(), uri.getPort());
      socket.setTcpNoDelay(true);
      return socket;
    }
    SSLSocket socket =
        (SSLSocket)
            HttpsClients.anyServer().getSocketFactory().createSocket(uri.getHost(), uri.getPort());
    socket.setTcpNoDelay(true);
    socket.startHandshake();
    return socket;
  }

  /** One request and its whole response (Content-Length or chunked); the response's status. */
  private static int exchange(Socket socket, byte[] request) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(request);
    out.flush();
    InputStream in = new BufferedInputStream(socket.getInputStream());
    String statusLine = readLine(in);
    int status = statusLine.length() >= 12 ? Integer.parseInt(statusLine.substring(9, 12)) : -1;
    long length = -1;
    boolean chunked = false;
    String line;
    while (!(line = readLine(in)).isEmpty()) {
      String lower = line.toLowerCase(Locale.ROOT);
      if (lower.startsWith("content-length:")) {
        length = Long.parseLong(lower.substring(15).trim());
      } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
        chunked = true;
      }
    }
    if (chunked) {
      long size;
      while ((size = Long.parseLong(readLine(in).trim(), 16)) > 0) {
        skip(in, size + 2);
      }
      readLine(in);
    } else if (length > 0) {
      skip(in, length);
    }
    return status;
  }

  private static String readLine(InputStream in) throws IOException {
    StringBuilder b = new StringBuilder();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        throw new IOException("connection closed");
      }
      if (c != '\r') {
        b.append((char) c);
      }
    }
    return b.toString();
  }

  private static void skip(InputStream in, long n) throws IOException {
    long left = n;
    while (left > 0) {
      long skipped = in.skip(left);
      if (skipped <= 0) {
        if (in.read() < 0) {
          throw new IOException("connection closed");
        }
        skipped = 1;
      }
      left -= skipped;
    }
  }

  private static double percentile(long[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int i = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
    return sorted[Math.max(0, i)] / 1e6;
  }
}
