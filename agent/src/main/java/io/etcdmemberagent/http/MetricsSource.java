package io.etcdmemberagent.http;

/** Prometheus exposition for /metrics, in the format the scraper's Accept header asks for. */
public interface MetricsSource {
  String contentType(String accept);

  String scrape(String accept);
}
