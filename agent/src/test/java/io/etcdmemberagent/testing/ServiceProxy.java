package io.etcdmemberagent.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A ClusterIP Service on one machine: accepts on an address and forwards each connection to one of
 * the currently ready endpoints (round robin); with none ready the connection is closed at once, as
 * kube-proxy rejects a Service without endpoints. Connections stay where they were sent.
 */
public final class ServiceProxy implements AutoCloseable {

  private final ServerSocket server;
  private final Supplier<List<InetSocketAddress>> readyEndpoints;
  private final AtomicInteger next = new AtomicInteger();
  private final Thread acceptor;

  public ServiceProxy(String host, int port, Supplier<List<InetSocketAddress>> readyEndpoints) {
    this.readyEndpoints = readyEndpoints;
    try {
      server = new ServerSocket();
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(host, port));
    } catch (IOException e) {
      throw new IllegalStateException("cannot listen on " + host + ":" + port, e);
    }
    acceptor = new Thread(this::accept, "service-" + port);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        List<InetSocketAddress> ready = readyEndpoints.get();
        if (ready.isEmpty()) {
          client.close();
          continue;
        }
        InetSocketAddress target = ready.get(Math.floorMod(next.getAndIncrement(), ready.size()));
        Socket upstream = new Socket();
        try {
          upstream.connect(target, 2000);
        } catch (IOException e) {
          client.close();
          upstream.close();
          continue;
        }
        pipe(client, upstream);
        pipe(upstream, client);
      } catch (IOException e) {
        // closed, or one connection failed: keep serving the others
      }
    }
  }

  private static void pipe(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
              } catch (IOException ignored) {
                // the other side closed
              } finally {
                try {
                  from.close();
                  to.close();
                } catch (IOException ignored) {
                  // already closed
                }
              }
            },
            "service-pipe");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException ignored) {
      // closing
    }
  }
}
