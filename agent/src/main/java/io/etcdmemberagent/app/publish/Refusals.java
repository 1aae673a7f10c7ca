package io.etcdmemberagent.app.publish;

import io.etcdmemberagent.core.KubeAnswer;
import io.etcdmemberagent.support.EventLog;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Refusals that retrying will not fix (403, 404, 422 ...), by call: logged once per call and kind,
 * naming the call and the API server's own words (e.g. which verb the Role lacks), and kept for
 * {@code /status} until the call succeeds.
 */
final class Refusals {

  private final Map<String, String> byCall = new ConcurrentHashMap<>();

  void say(String call, KubeAnswer answer) {
    say(call, answer instanceof KubeAnswer.Rejected r ? r.message() : answer.toString());
  }

  void say(String call, String detail) {
    String previous = byCall.put(call, detail);
    if (previous == null || !previous.equals(detail)) {
      EventLog.error("kube-refused", "call", call, "detail", detail);
    }
  }

  void clear(String call) {
    byCall.remove(call);
  }

  Map<String, String> snapshot() {
    return new TreeMap<>(byCall);
  }
}
