package io.etcdmemberagent.fault;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import io.etcd.jetcd.api.Member;
import io.etcd.jetcd.api.StatusResponse;
import io.etcdmemberagent.testing.EtcdTestClient;
import io.etcdmemberagent.testing.HttpsClients;
import java.util.List;
import java.util.function.Supplier;

/**
 * Samples a running fault test into a {@link History}: the agent's {@code /readyz} and the
 * published ready condition every 50 ms, and the ground truth about the local member every 100 ms
 * (its own Status with a 500 ms deadline; whether it is a voter by the member list the other
 * members give). Runs until closed. Where things are is asked at each sample (a re-created Pod has
 * a new address).
 */
final class Recorder implements AutoCloseable {

  static final String READY_CONDITION = "etcd-member-agent.io/ready";

  private final History history = new History();
  private final EtcdTestClient etcd;
  private final Supplier<String> agentHost;
  private final int agentPort;
  private final javax.net.ssl.SSLSocketFactory tls;
  private final Supplier<String> readyCondition;
  private final Supplier<String> localUrl;
  private final Supplier<List<String>> others;
  private final Thread verdicts;
  private final Thread truths;
  private volatile boolean running = true;
  private boolean lastVoterByOthers;

  /**
   * @param agentHost where the agent answers
   * @param https whether the agent serves HTTPS (its certificate is not verified, as the kubelet's
   *     probes do not)
   * @param readyCondition the published ready condition's status ("" where none is published)
   * @param localUrl the local member's client URL as the test reaches it (not through a proxy)
   * @param others client URLs of the other members, asked for the member list
   * @param etcd the client reading etcd (plain, or with a client certificate), closed with this
   */
  Recorder(
      Supplier<String> agentHost,
      int agentPort,
      boolean https,
      Supplier<String> readyCondition,
      Supplier<String> localUrl,
      Supplier<List<String>> others,
      EtcdTestClient etcd) {
    this.etcd = etcd;
    this.agentHost = agentHost;
    this.agentPort = agentPort;
    this.tls = https ? HttpsClients.anyServer().getSocketFactory() : null;
    this.readyCondition = readyCondition;
    this.localUrl = localUrl;
    this.others = others;
    this.verdicts = loop("record-verdicts", 50, this::sampleVerdict);
    this.truths = loop("record-truth", 100, this::sampleTruth);
  }

  /** The status of the ready condition among {@code conditions} ("" when absent). */
  static String readyOf(JsonArray conditions) {
    if (conditions == null) {
      return "";
    }
    for (JsonElement c : conditions) {
      if (READY_CONDITION.equals(c.getAsJsonObject().get("type").getAsString())) {
        return c.getAsJsonObject().get("status").getAsString();
      }
    }
    return "";
  }

  /**
   * Stops once /readyz was sampled more than 500 ms after the last mark and after {@code
   * notBeforeNanos} (and answered ready, when {@code ready}): closed at once, the history after the
   * last fault is a few milliseconds long, and a member not ready in them reads as "never ready
   * again".
   */
  History.Snapshot closeAfterLastMark(
      java.time.Duration limit, long notBeforeNanos, boolean ready) {
    long lastMark =
        history.snapshot().marks().stream().mapToLong(History.Mark::atNanos).max().orElse(0);
    long after = Math.max(notBeforeNanos, lastMark + 500_000_000L);
    io.etcdmemberagent.testing.Poll.until(
        "/readyz sampled for a while after the last mark",
        limit,
        () ->
            history.snapshot().verdicts().stream()
                .anyMatch(v -> (v.ready() || !ready) && v.atNanos() > after));
    close();
    return history.snapshot();
  }

  History history() {
    return history;
  }

  void mark(History.Kind kind, String label) {
    history.mark(kind, label);
  }

  private Thread loop(String name, long periodMillis, Runnable sample) {
    Thread t =
        new Thread(
            () -> {
              long next = System.nanoTime();
              while (running) {
                sample.run();
                next += periodMillis * 1_000_000;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                  try {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000)); // the sampling period
                  } catch (InterruptedException e) {
                    return;
                  }
                } else {
                  next = System.nanoTime();
                }
              }
            },
            name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private void sampleVerdict() {
    long at = System.nanoTime();
    int readyz = readyz();
    String condition;
    try {
      condition = readyCondition.get();
    } catch (RuntimeException e) {
      condition = "";
    }
    history.add(new History.Verdict(at, readyz, condition, System.nanoTime()));
  }

  /**
   * One GET on a fresh connection with 1 s timeouts: a pooled client once kept a recorder blocked
   * on a connection the restarted agent never answered, and one sample must cost one sample.
   */
  private int readyz() {
    String host = agentHost.get();
    if (host == null) {
      return -1;
    }
    try (java.net.Socket plain = new java.net.Socket()) {
      plain.connect(new java.net.InetSocketAddress(host, agentPort), 1000);
      plain.setSoTimeout(1000);
      java.net.Socket s = tls == null ? plain : tls.createSocket(plain, host, agentPort, true);
      s.getOutputStream()
          .write(
              ("GET /readyz HTTP/1.0\r\nHost: " + host + "\r\n\r\n")
                  .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      java.io.BufferedReader in =
          new java.io.BufferedReader(
              new java.io.InputStreamReader(
                  s.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII));
      String status = in.readLine(); // HTTP/1.1 200 OK
      return status == null ? -1 : Integer.parseInt(status.split(" ")[1]);
    } catch (java.io.IOException | RuntimeException e) {
      return -1;
    }
  }

  private void sampleTruth() {
    long at = System.nanoTime();
    StatusResponse status;
    String local = localUrl.get();
    try {
      if (local == null) {
        throw new IllegalStateException("the member has no address now");
      }
      status = etcd.status(local, 500);
    } catch (RuntimeException e) {
      if (!running) {
        return; // interrupted by close(), not an answer
      }
      if (local != null) {
        etcd.forget(local);
      }
      history.add(new History.Truth(at, false, false, false, false, System.nanoTime()));
      return;
    }
    long self = status.getHeader().getMemberId();
    boolean corrupt = status.getErrorsList().stream().anyMatch(e -> e.contains("CORRUPT"));
    boolean voterByOthers = lastVoterByOthers; // when no other member answers: what they said last
    for (String other : others.get()) {
      try {
        voterByOthers =
            etcd.members(other, 500).stream()
                .filter(m -> m.getID() == self)
                .anyMatch(m -> !m.getIsLearner());
        lastVoterByOthers = voterByOthers;
        break;
      } catch (RuntimeException e) {
        etcd.forget(other); // that one does not answer: ask the next
      }
    }
    history.add(
        new History.Truth(
            at,
            true,
            voterByOthers && !status.getIsLearner(),
            status.getLeader() != 0,
            corrupt,
            System.nanoTime()));
  }

  /** The member IDs the others list, for checks that name members. */
  List<Member> members() {
    for (String other : others.get()) {
      try {
        return etcd.members(other, 2000);
      } catch (RuntimeException e) {
        // next
      }
    }
    return List.of();
  }

  @Override
  public void close() {
    running = false;
    verdicts.interrupt();
    truths.interrupt();
    try {
      verdicts.join(5000);
      truths.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    etcd.close();
  }
}
