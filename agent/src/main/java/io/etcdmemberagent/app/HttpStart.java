package io.etcdmemberagent.app;

import io.etcdmemberagent.http.HttpServer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * Starts the HTTP server on a thread of its own while the rest of the agent is wired: Jetty's start
 * is the longest single step of start-up (about 200 ms of 500 with the image's cache), and the
 * Kubernetes client, the metrics and the etcd channels take about as long on the other core.
 */
final class HttpStart {

  private final CompletableFuture<HttpServer> server;

  private HttpStart(CompletableFuture<HttpServer> server) {
    this.server = server;
  }

  static HttpStart begin(Supplier<HttpServer> start) {
    CompletableFuture<HttpServer> server = new CompletableFuture<>();
    Thread starter =
        new Thread(
            () -> {
              try {
                server.complete(start.get());
              } catch (RuntimeException | Error e) {
                server.completeExceptionally(e);
              }
            },
            "http-start");
    starter.start();
    return new HttpStart(server);
  }

  /** The started server; the start's own exception if it could not start. */
  HttpServer await() {
    try {
      return server.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw e;
    }
  }

  /** Start-up failed elsewhere: waits for the server and stops it, so the port is free again. */
  void abandon() {
    try {
      server.join().close();
    } catch (CompletionException e) {
      // it did not start either; the other failure is the one to report
    }
  }
}
