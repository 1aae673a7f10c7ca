package io.etcdmemberagent.fault;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.kube.FakeKubeApi;
import io.etcdmemberagent.testing.AgentLog;
import io.etcdmemberagent.testing.AgentProcess;
import io.etcdmemberagent.testing.FreePorts;
import io.etcdmemberagent.testing.Http;
import io.etcdmemberagent.testing.KubeControlPlane;
import io.etcdmemberagent.testing.Poll;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One agent under fault: the real jar polling every 500 ms with a 1 s etcd timeout, publishing to
 * the real API server (Pod {@code etcd-0} in a namespace of its own, resync every 2 s; the stand-in
 * only for the faults a real server cannot give on demand), and a {@link Recorder} on it. The
 * invariants' bounds follow from those settings and are stated here.
 */
final class FaultRig implements AutoCloseable {

  static final Duration POLL = Duration.ofMillis(500);
  static final Duration ETCD_TIMEOUT = Duration.ofSeconds(1);
  static final String POD = "etcd-0";

  /**
   * ready must follow the truth within poll + etcd timeout, plus 400 ms: the recorder samples
   * /readyz every 50 ms and the truth every 100 ms with a 500 ms deadline of its own.
   */
  static final Duration DETECTION = POLL.plus(ETCD_TIMEOUT).plusMillis(400);

  /**
   * After a fault ends, ready again within 10 s: etcd restarting or re-electing (election timeout 1
   * s in these clusters) and reconnecting, then one poll.
   */
  static final Duration CONVERGENCE = Duration.ofSeconds(10);

  /** The published condition follows /readyz within 3 s while the API is healthy. */
  static final Duration PUBLICATION = Duration.ofSeconds(3);

  final Invariants invariants = new Invariants(DETECTION, CONVERGENCE, PUBLICATION);
  final Publication publication;
  private final Path dir;
  private final List<AgentProcess> agents = new ArrayList<>();
  private final List<String> pastOutput = new ArrayList<>();
  private Recorder recorder;
  private String host = "127.0.0.1";
  private List<String> prefix = List.of();

  /** Publishing to the shared real API server, or with Kubernetes off. */
  FaultRig(boolean kube) {
    this(
        kube
            ? d -> {
              KubeControlPlane shared = KubeControlPlane.shared();
              return new RealApiPublication(shared, d, shared.url());
            }
            : null);
  }

  /** Publishing to the stand-in: for answers a real server does not give on demand. */
  static FaultRig withStandIn() {
    return new FaultRig(d -> new StandInPublication(new FakeKubeApi(), d));
  }

  /** Publishing where {@code publication} says (made with the rig's scratch directory). */
  FaultRig(Function<Path, Publication> publication) {
    try {
      dir = Files.createTempDirectory("fault-rig-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.publication = publication == null ? null : publication.apply(dir);
  }

  /** The stand-in this rig publishes to. */
  FakeKubeApi standIn() {
    return ((StandInPublication) publication).api;
  }

  /**
   * Runs the agent behind a command prefix (e.g. {@code ip netns exec NS}) listening on {@code
   * host}, where the test reaches it.
   */
  FaultRig inNetwork(List<String> commandPrefix, String agentHost) {
    this.prefix = List.copyOf(commandPrefix);
    this.host = agentHost;
    return this;
  }

  /** Runs the agent as this user and group ID (the rig's files must then be readable by it). */
  FaultRig asUser(int uid) {
    this.prefix = asUserCommand(uid);
    return this;
  }

  /** The command prefix that runs what follows as this user and group ID, without groups. */
  static List<String> asUserCommand(int uid) {
    return List.of("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "--");
  }

  /** Starts (or restarts) the agent with these flags on top of the rig's own. */
  AgentProcess startAgent(String etcdEndpoint, List<String> clusterEndpoints, String... extra) {
    int port = agents.isEmpty() ? FreePorts.next() : agent().port();
    List<String> args =
        new ArrayList<>(
            List.of(
                "run",
                "--etcd-endpoint=" + etcdEndpoint,
                "--cluster-endpoints=" + String.join(",", clusterEndpoints),
                "--http-host=" + host,
                "--http-port=" + port,
                "--poll-interval=" + POLL.toMillis() + "ms",
                "--etcd-timeout=" + ETCD_TIMEOUT.toMillis() + "ms",
                "--log-format=json",
                "--log-level=debug"));
    if (publication != null) {
      args.addAll(publication.agentFlags());
      args.addAll(List.of("--resync-interval=2s", "--kube-timeout=2s"));
    } else {
      args.add("--kube=off");
    }
    args.addAll(List.of(extra));
    AgentProcess agent = AgentProcess.start(prefix, port, Map.of(), args.toArray(String[]::new));
    agents.add(agent);
    return agent;
  }

  AgentProcess agent() {
    return agents.get(agents.size() - 1);
  }

  /** Stops the current agent with {@code signal} (KILL, TERM), keeping its log; its exit status. */
  int stopAgent(String signal) {
    AgentProcess agent = agent();
    io.etcdmemberagent.testing.Processes.signal(agent.process(), signal);
    int exit = agent.waitFor(20);
    pastOutput.add(agent.output());
    return exit;
  }

  /** The log lines of every agent process this rig started, in order. */
  AgentLog log() {
    List<String> all = new ArrayList<>();
    pastOutput.forEach(o -> all.addAll(AgentLog.of(o).lines()));
    if (agent().process().isAlive() || pastOutput.size() < agents.size()) {
      all.addAll(AgentLog.of(agent().output()).lines());
    }
    return new AgentLog(all);
  }

  /** Starts recording; {@code localUrl} is how the truth reaches the local member. */
  Recorder record(String localUrl, Supplier<List<String>> others) {
    int port = agent().port();
    recorder =
        new Recorder(
            () -> host,
            port,
            false,
            () -> publication == null ? "" : Recorder.readyOf(publication.conditions()),
            () -> localUrl,
            others,
            new io.etcdmemberagent.testing.EtcdTestClient());
    return recorder;
  }

  void mark(History.Kind kind, String label) {
    recorder.mark(kind, label);
  }

  void awaitReady(String what) {
    Poll.until(what + ": /readyz 200", CONVERGENCE.plusSeconds(20), () -> readyz() == 200);
    if (recorder == null) {
      return;
    }
    // the next fault must not begin before the recorder's own truth sample has seen the member
    // healthy too: a window of a few ms between two faults is seen by the agent's poll and not by
    // the recorder, and its 200s would then read as unbacked by any truth
    long seen = System.nanoTime();
    Poll.until(
        what + ": the recorder sees a healthy voter",
        CONVERGENCE.plusSeconds(20),
        () ->
            recorder.history().snapshot().truths().stream()
                .anyMatch(t -> t.atNanos() >= seen && t.healthyVoter()));
  }

  void awaitNotReady(String what) {
    Poll.until(what + ": /readyz 503", DETECTION.plusSeconds(5), () -> readyz() == 503);
  }

  int readyz() {
    return Http.statusOrMinusOne(host, agent().port(), "/readyz");
  }

  /** Waits until the published ready condition is {@code status}. */
  void awaitCondition(String status) {
    Poll.until(
        "the published ready condition " + status,
        CONVERGENCE.plus(PUBLICATION),
        () -> status.equals(readyCondition()));
  }

  String readyCondition() {
    return Recorder.readyOf(publication.conditions());
  }

  /** Stops recording and checks every invariant over the whole history. */
  History.Snapshot assertInvariants(long ownMemberId, long maxLag) {
    // the test has just seen its own answer from /readyz; the recorder must see it too before it
    // stops, or a return to ready in the last 50 ms would read as "never came back"
    History.Snapshot h =
        recorder.closeAfterLastMark(Duration.ofSeconds(10), System.nanoTime(), false);
    Invariants.convergenceTimes(h).forEach(t -> System.out.println("[fault] " + t));
    List<String> violations = new ArrayList<>();
    violations.addAll(invariants.readyOnlyForAHealthyVoter(h));
    violations.addAll(invariants.readyAgainAfterEveryFault(h));
    violations.addAll(invariants.noFlappingInSteadyWindows(h));
    if (publication != null) {
      violations.addAll(invariants.conditionFollowsReadiness(h));
      violations.addAll(invariants.noRedundantPatches(h, publication.agentPatches()));
    }
    violations.addAll(Invariants.promotesFollowTheRule(log(), ownMemberId, maxLag));
    if (!violations.isEmpty()) {
      keepLog(h);
    }
    assertThat(violations).as("invariant violations; marks: " + Invariants.marks(h)).isEmpty();
    assertThat(h.verdicts()).as("the recorder sampled /readyz").hasSizeGreaterThan(20);
    assertThat(agent().process().isAlive()).as("the agent is still running").isTrue();
    return h;
  }

  /** Leaves the agent's log in target/fault-logs for a failed run. */
  private void keepLog(History.Snapshot h) {
    try {
      Path logs = Files.createDirectories(Path.of("target", "fault-logs"));
      Path file = Files.createTempFile(logs, "agent-", ".log");
      Files.write(file, log().lines(), StandardCharsets.UTF_8);
      Files.write(Path.of(file + ".history"), Invariants.changes(h), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    if (recorder != null) {
      recorder.close();
    }
    agents.forEach(AgentProcess::close);
    if (publication != null) {
      publication.close();
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
