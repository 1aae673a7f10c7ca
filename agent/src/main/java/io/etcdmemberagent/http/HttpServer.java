package io.etcdmemberagent.http;

import io.etcdmemberagent.core.access.AccessDecision;
import io.etcdmemberagent.support.Json;
import io.javalin.Javalin;
import io.javalin.http.Context;
import java.security.cert.X509Certificate;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The agent's one port: /readyz, /livez, /status, /metrics and /hold-etcd, over plain HTTP or
 * HTTPS. The health paths and the hold are anonymous, as kube-apiserver's health paths are (kubelet
 * probes and hooks send no credential); /status and /metrics answer only callers the {@link
 * AccessPolicy} admits.
 */
public final class HttpServer implements AutoCloseable {

  private static final String TEXT = "text/plain; charset=utf-8";
  private static final String CLIENT_CERTIFICATES = "jakarta.servlet.request.X509Certificate";

  private final Javalin app;
  private final Optional<TlsConnector> tls;
  private final HoldRequests holds;

  private HttpServer(Javalin app, Optional<TlsConnector> tls, HoldRequests holds) {
    this.app = app;
    this.tls = tls;
    this.holds = holds;
  }

  /** Plain HTTP, every path open to anyone. */
  public static HttpServer start(String host, int port, AgentView view, MetricsSource metrics) {
    return start(host, port, Optional.empty(), AccessPolicy.ANYONE, view, metrics);
  }

  /** HTTPS when {@code keys} are given; {@code access} guards /status and /metrics. */
  public static HttpServer start(
      String host,
      int port,
      Optional<ServingKeys> keys,
      AccessPolicy access,
      AgentView view,
      MetricsSource metrics) {
    return start(host, port, keys, access, view, metrics, EtcdHold.NONE);
  }

  /** As above, with {@code GET /hold-etcd} answered from {@code hold}. */
  public static HttpServer start(
      String host,
      int port,
      Optional<ServingKeys> keys,
      AccessPolicy access,
      AgentView view,
      MetricsSource metrics,
      EtcdHold hold) {
    Optional<TlsConnector> tls = keys.map(TlsConnector::new);
    HoldRequests holds = new HoldRequests(hold);
    Javalin app =
        Javalin.create(
            config -> {
              config.startup.showJavalinBanner = false;
              config.jetty.host = host;
              config.jetty.port = port;
              config.jetty.threadPool = threadPool();
              tls.ifPresent(
                  t ->
                      config.jetty.addConnector(
                          (server, httpConfig) -> t.connector(server, httpConfig, host, port)));
              config.routes.get("/readyz", ctx -> readyz(ctx, view));
              config.routes.get("/readyz/{check}", ctx -> readyzOne(ctx, view));
              config.routes.get("/livez", ctx -> livez(ctx, view));
              config.routes.get(HoldRequests.PATH, holds::serve);
              config.routes.get("/status", ctx -> guarded(ctx, access, () -> status(ctx, view)));
              config.routes.get(
                  "/metrics", ctx -> guarded(ctx, access, () -> metrics(ctx, metrics)));
            });
    app.start();
    return new HttpServer(app, tls, holds);
  }

  /** HTTPS only: new connections are served with {@code keys}. */
  public void reloadKeys(ServingKeys keys) {
    tls.orElseThrow(() -> new IllegalStateException("this server does not serve HTTPS"))
        .reload(keys);
  }

  /**
   * Serves {@code serve} to an admitted caller. A decision the policy has at hand is answered on
   * this thread; one that waits for a review releases the request thread until it completes.
   */
  private static void guarded(Context ctx, AccessPolicy access, Runnable serve) {
    CompletableFuture<AccessDecision> decision =
        access.decide(
            ctx.path(),
            ctx.method().name().toLowerCase(Locale.ROOT),
            bearerToken(ctx),
            clientCertificate(ctx));
    if (decision.isDone()) {
      if (admitted(ctx, decision.join())) {
        serve.run();
      }
      return;
    }
    ctx.future(
        () ->
            decision.thenAccept(
                d -> {
                  if (admitted(ctx, d)) {
                    serve.run();
                  }
                }));
  }

  private static boolean admitted(Context ctx, AccessDecision decision) {
    if (decision instanceof AccessDecision.Allowed) {
      return true;
    }
    int status;
    if (decision instanceof AccessDecision.Unauthenticated) {
      status = 401;
      ctx.header("WWW-Authenticate", "Bearer");
    } else if (decision instanceof AccessDecision.Forbidden) {
      status = 403;
    } else {
      status = 503;
    }
    ctx.status(status).contentType(TEXT).result(decision.detail() + "\n");
    return false;
  }

  private static Optional<String> bearerToken(Context ctx) {
    String header = ctx.header("Authorization");
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return Optional.empty();
    }
    return Optional.of(header.substring(7).strip());
  }

  private static Optional<String> clientCertificate(Context ctx) {
    Object certs = ctx.req().getAttribute(CLIENT_CERTIFICATES);
    if (certs instanceof X509Certificate[] chain && chain.length > 0) {
      return Optional.of(chain[0].getSubjectX500Principal().getName());
    }
    return Optional.empty();
  }

  /**
   * Javalin's default pool keeps 8 threads and may grow to 250; a probe and a scraper need two, and
   * a scrape storm is served from a cached rendering, so 16 are plenty.
   */
  private static QueuedThreadPool threadPool() {
    QueuedThreadPool pool = new QueuedThreadPool(16, 2, 60_000);
    pool.setName("http");
    return pool;
  }

  public int port() {
    return app.port();
  }

  private static void readyz(Context ctx, AgentView view) {
    Set<String> excluded = new HashSet<>(ctx.queryParams("exclude"));
    boolean verbose = ctx.queryParamMap().containsKey("verbose");
    answer(ctx, ReadyzReport.all(view.readinessChecks(), excluded, verbose));
  }

  private static void readyzOne(Context ctx, AgentView view) {
    answer(ctx, ReadyzReport.one(view.readinessChecks(), ctx.pathParam("check")));
  }

  private static void answer(Context ctx, ReadyzReport.Answer answer) {
    ctx.status(answer.status()).contentType(TEXT).result(answer.body());
  }

  private static void livez(Context ctx, AgentView view) {
    view.livenessProblem()
        .ifPresentOrElse(
            problem ->
                ctx.status(503).contentType(TEXT).result("[-]loop failed: " + problem + "\n"),
            () -> ctx.status(200).contentType(TEXT).result("ok\n"));
  }

  private static void status(Context ctx, AgentView view) {
    ctx.contentType("application/json").result(Json.write(StatusDocument.of(view)));
  }

  private static void metrics(Context ctx, MetricsSource metrics) {
    String accept = ctx.header("Accept");
    ctx.contentType(metrics.contentType(accept)).result(metrics.scrape(accept));
  }

  /**
   * Waits, at most {@code timeout}, until every hold in flight has been answered, so that the
   * caller (etcd's preStop) gets its answer before the port closes; when no hold has come yet,
   * first gives one {@code firstWithin} to arrive (a hold refused at a closed port is a
   * FailedPreStopHook Event on every restart).
   */
  public void awaitHoldsAnswered(java.time.Duration firstWithin, java.time.Duration timeout)
      throws InterruptedException {
    holds.awaitNoneOpen(firstWithin, timeout);
  }

  @Override
  public void close() {
    holds.close();
    app.stop();
  }
}
