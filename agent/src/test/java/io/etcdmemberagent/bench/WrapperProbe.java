package io.etcdmemberagent.bench;

import io.etcdmemberagent.testing.EtcdTestClient;

/**
 * etcd-wrapper's readiness, emulated: a linearizable get on the local member every 2 s with a 5 s
 * timeout; ready while the last one succeeded. Runs on its own thread until closed.
 */
final class WrapperProbe implements AutoCloseable {

  private final EtcdTestClient client = new EtcdTestClient();
  private final String endpoint;
  private final Thread thread;
  private volatile boolean ready;
  private volatile boolean running = true;

  WrapperProbe(String endpoint) {
    this.endpoint = endpoint;
    thread = new Thread(this::loop, "etcd-wrapper-probe");
    thread.setDaemon(true);
    thread.start();
  }

  boolean ready() {
    return ready;
  }

  private void loop() {
    long next = System.nanoTime();
    while (running) {
      try {
        client.get(endpoint, "etcd-wrapper-readiness", 5000);
        ready = true;
      } catch (RuntimeException e) {
        ready = false;
        client.forget(endpoint);
      }
      next += 2_000_000_000L;
      long wait = next - System.nanoTime();
      if (wait <= 0) {
        next = System.nanoTime();
        continue;
      }
      try {
        Thread.sleep(wait / 1_000_000); // the emulated policy's period
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    client.close();
  }
}
