package io.etcdmemberagent.http;

/** Prometheus exposition for /metrics, in the format the scraper's Accept header asks for. */
public interface MetricsSource {
  String contentType(String accept);

  /** The exposition in UTF-8. */
  byte[] scrape(String accept);
}
