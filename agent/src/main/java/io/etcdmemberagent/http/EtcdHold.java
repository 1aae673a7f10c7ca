package io.etcdmemberagent.http;

import java.util.concurrent.CompletableFuture;

/**
 * What {@code GET /hold-etcd} waits on: etcd's preStop hook calls it, and etcd is stopped only once
 * it answers. Answered from the agent's own settlement, never from the request's thread pool.
 */
public interface EtcdHold {

  /** Nothing is ever held (no membership changes): every hold answers at once. */
  EtcdHold NONE =
      new EtcdHold() {
        @Override
        public CompletableFuture<String> hold() {
          return CompletableFuture.completedFuture("membership changes are off: nothing held");
        }

        @Override
        public String progress() {
          return "nothing held";
        }
      };

  /** Completes, with what was settled, once etcd may stop. */
  CompletableFuture<String> hold();

  /** What the hold waits for now: one line for the caller while it waits. */
  String progress();
}
