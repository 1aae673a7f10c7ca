package io.etcdmemberagent.http;

import io.etcdmemberagent.support.Json;
import io.javalin.Javalin;
import io.javalin.http.Context;
import java.util.HashSet;
import java.util.Set;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** The agent's one HTTP port: /readyz, /livez, /status, /metrics. */
public final class HttpServer implements AutoCloseable {

  private static final String TEXT = "text/plain; charset=utf-8";

  private final Javalin app;

  private HttpServer(Javalin app) {
    this.app = app;
  }

  public static HttpServer start(String host, int port, AgentView view, MetricsSource metrics) {
    Javalin app =
        Javalin.create(
            config -> {
              config.startup.showJavalinBanner = false;
              config.jetty.host = host;
              config.jetty.port = port;
              config.jetty.threadPool = threadPool();
              config.routes.get("/readyz", ctx -> readyz(ctx, view));
              config.routes.get("/readyz/{check}", ctx -> readyzOne(ctx, view));
              config.routes.get("/livez", ctx -> livez(ctx, view));
              config.routes.get("/status", ctx -> status(ctx, view));
              config.routes.get("/metrics", ctx -> metrics(ctx, metrics));
            });
    app.start();
    return new HttpServer(app);
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

  @Override
  public void close() {
    app.stop();
  }
}
