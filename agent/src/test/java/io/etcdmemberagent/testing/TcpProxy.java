package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A fault-injecting TCP proxy in this JVM (the machines have no {@code tc}): listens on a free
 * loopback port and forwards every connection to a target, in one of four modes that can change at
 * any time and apply to open connections too. {@link Mode.Pass} forwards; {@link Mode.Blackhole}
 * accepts and reads but forwards nothing either way (a partition: the peer sees silence, not an
 * error); {@link Mode.Delay} holds every chunk for a delay with jitter before forwarding it; {@link
 * Mode.Drop} resets open connections and closes new ones at once (a peer that refuses).
 */
public final class TcpProxy implements AutoCloseable {

  /** What the proxy does with traffic. */
  public sealed interface Mode {
    record Pass() implements Mode {}

    record Blackhole() implements Mode {}

    record Delay(Duration delay, Duration jitter) implements Mode {}

    record Drop() implements Mode {}
  }

  public static final Mode PASS = new Mode.Pass();
  public static final Mode BLACKHOLE = new Mode.Blackhole();
  public static final Mode DROP = new Mode.Drop();

  private final InetSocketAddress target;
  private final ServerSocket server;
  private final Set<Link> open = ConcurrentHashMap.newKeySet();
  private volatile Mode mode = PASS;

  /** Null: the mode applies to every connection. */
  private volatile Predicate<String> selects;

  /** One proxied connection and the first bytes its client sent (null until then). */
  private static final class Link {
    final Socket client;
    final Socket upstream = new Socket();
    volatile String head;

    Link(Socket client) {
      this.client = client;
    }

    void reset() {
      TcpProxy.reset(client);
      TcpProxy.reset(upstream);
    }
  }

  public TcpProxy(String targetHost, int targetPort) {
    this.target = new InetSocketAddress(targetHost, targetPort);
    try {
      server = new ServerSocket(FreePorts.next(), 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new IllegalStateException("cannot listen for a proxy to " + target, e);
    }
    daemon("proxy-accept-" + port(), this::accept).start();
  }

  /** A proxy in front of an {@code http://host:port} URL. */
  public static TcpProxy inFrontOf(String url) {
    java.net.URI uri = java.net.URI.create(url);
    return new TcpProxy(uri.getHost(), uri.getPort());
  }

  public int port() {
    return server.getLocalPort();
  }

  public String url() {
    return "http://127.0.0.1:" + port();
  }

  public Mode mode() {
    return mode;
  }

  /**
   * Applies the mode only to connections whose first bytes from the client (e.g. an HTTP request
   * head) match; the others always pass. By default every connection is selected.
   */
  public void select(Predicate<String> firstBytes) {
    selects = firstBytes;
  }

  public void mode(Mode next) {
    mode = next;
    if (next instanceof Mode.Drop) {
      List.copyOf(open).stream().filter(this::selected).forEach(Link::reset);
    }
  }

  private void accept() {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      Link link = new Link(client);
      if (mode instanceof Mode.Drop && selects == null) {
        reset(client); // refused at once
        continue;
      }
      open.add(link);
      daemon("proxy-connect-" + port(), () -> connect(link)).start();
    }
  }

  private void connect(Link link) {
    try {
      link.upstream.connect(target, 2000);
    } catch (IOException e) {
      link.reset();
      open.remove(link);
      return;
    }
    daemon("proxy-up-" + port(), () -> pump(link, link.client, link.upstream)).start();
    daemon("proxy-down-" + port(), () -> pump(link, link.upstream, link.client)).start();
  }

  /** Whether the mode applies to this connection. */
  private boolean selected(Link link) {
    Predicate<String> selection = selects;
    String head = link.head;
    return selection == null || (head != null && selection.test(head));
  }

  private Mode modeFor(Link link) {
    return selected(link) ? mode : PASS;
  }

  private void pump(Link link, Socket from, Socket to) {
    byte[] buffer = new byte[16 * 1024];
    try (InputStream in = from.getInputStream()) {
      OutputStream out = to.getOutputStream();
      int n;
      while ((n = in.read(buffer)) >= 0) {
        if (link.head == null && from == link.client) {
          link.head = new String(buffer, 0, n, java.nio.charset.StandardCharsets.ISO_8859_1);
        }
        Mode now = modeFor(link);
        if (now instanceof Mode.Blackhole) {
          continue; // read and forget: the sender's writes succeed, nothing arrives
        }
        if (now instanceof Mode.Drop) {
          break;
        }
        if (now instanceof Mode.Delay d) {
          TimeUnit.NANOSECONDS.sleep(delayOf(d));
        }
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side went away: end both
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (modeFor(link) instanceof Mode.Drop) {
        link.reset();
      } else {
        close(from);
        close(to);
      }
      open.remove(link);
    }
  }

  private static long delayOf(Mode.Delay d) {
    long jitter = d.jitter().toNanos();
    long offset = jitter == 0 ? 0 : ThreadLocalRandom.current().nextLong(-jitter, jitter + 1);
    return Math.max(0, d.delay().toNanos() + offset);
  }

  /** Closes with an RST (SO_LINGER 0), as a refusing or crashed peer would. */
  private static void reset(Socket socket) {
    try {
      socket.setSoLinger(true, 0);
    } catch (IOException ignored) {
      // already closed
    }
    close(socket);
  }

  private static void close(java.io.Closeable socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // nothing left to close
    }
  }

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    return t;
  }

  @Override
  public void close() {
    close(server);
    List.copyOf(open).forEach(Link::reset);
    open.clear();
  }
}
