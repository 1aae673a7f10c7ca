package io.etcdmemberagent.testing;

import io.etcd.jetcd.api.Member;
import io.etcd.jetcd.api.StatusResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A real etcd cluster of local processes on free loopback ports, in a temp dir that is deleted on
 * close. Members can be paused, resumed, killed and restarted; learners added and started.
 */
public final class EtcdCluster implements AutoCloseable {

  private final String version;
  private final Path binary;
  private final Path baseDir;
  private final String token = "test-" + UUID.randomUUID();
  private final List<EtcdMember> members = new ArrayList<>();
  private final EtcdTestClient client = new EtcdTestClient();
  private List<String> extraFlags = List.of();

  private EtcdCluster(String version) {
    this.version = version;
    this.binary = EtcdBinaries.etcd(version);
    try {
      this.baseDir = Files.createTempDirectory("etcd-cluster-" + version + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts {@code size} voters and waits until they have a leader. */
  public static EtcdCluster start(String version, int size) {
    return start(version, size, java.util.function.UnaryOperator.identity());
  }

  /**
   * Starts {@code size} voters that advertise {@code advertise.apply(clientUrl)} as their client
   * URL (e.g. a proxy in front of it), and waits until they have a leader.
   */
  public static EtcdCluster start(
      String version, int size, java.util.function.UnaryOperator<String> advertise) {
    return start(version, size, advertise, java.util.function.UnaryOperator.identity());
  }

  /**
   * The same with the peer URLs advertised as {@code advertisePeer.apply(listenPeerUrl)} too (e.g.
   * a proxy in front of each member's peer port).
   */
  public static EtcdCluster start(
      String version,
      int size,
      java.util.function.UnaryOperator<String> advertise,
      java.util.function.UnaryOperator<String> advertisePeer) {
    return start(version, size, advertise, advertisePeer, List.of());
  }

  /** Starts {@code size} voters with {@code flags} added to every member's command line. */
  public static EtcdCluster startWithFlags(String version, int size, List<String> flags) {
    return start(
        version,
        size,
        java.util.function.UnaryOperator.identity(),
        java.util.function.UnaryOperator.identity(),
        flags);
  }

  private static EtcdCluster start(
      String version,
      int size,
      java.util.function.UnaryOperator<String> advertise,
      java.util.function.UnaryOperator<String> advertisePeer,
      List<String> flags) {
    EtcdCluster cluster = new EtcdCluster(version);
    cluster.extraFlags = List.copyOf(flags);
    try {
      for (int i = 0; i < size; i++) {
        EtcdMember m = cluster.newMember("m" + i);
        m.advertiseClientUrl(advertise.apply(m.clientUrl()));
        m.advertisePeerUrl(advertisePeer.apply(m.listenPeerUrl()));
        cluster.members.add(m);
      }
      String initial =
          cluster.members.stream()
              .map(m -> m.name() + "=" + m.peerUrl())
              .collect(Collectors.joining(","));
      cluster.members.forEach(m -> m.start(initial, "new", cluster.token));
      cluster.awaitLeader(Duration.ofSeconds(30));
      return cluster;
    } catch (RuntimeException | Error e) {
      cluster.close();
      throw e;
    }
  }

  public String version() {
    return version;
  }

  public EtcdTestClient client() {
    return client;
  }

  public List<EtcdMember> members() {
    return List.copyOf(members);
  }

  public EtcdMember member(int i) {
    return members.get(i);
  }

  /** The running members' client URLs, comma separated. */
  public String clientUrls() {
    return members.stream()
        .filter(EtcdMember::running)
        .map(EtcdMember::clientUrl)
        .collect(Collectors.joining(","));
  }

  public void awaitLeader(Duration limit) {
    Poll.until("a leader in the " + version + " cluster", limit, () -> leader().isPresent());
  }

  /** The running member that says it leads, if any. */
  public Optional<EtcdMember> leader() {
    for (EtcdMember m : members) {
      if (!m.running()) {
        continue;
      }
      try {
        StatusResponse s = client.status(m.clientUrl());
        if (s.getLeader() != 0 && s.getLeader() == s.getHeader().getMemberId()) {
          return Optional.of(m);
        }
      } catch (RuntimeException e) {
        // not answering: not the leader we can talk to
      }
    }
    return Optional.empty();
  }

  /**
   * Adds a member (through the leader) without starting it. etcd refuses membership changes with
   * "unhealthy cluster" until every member has been connected for a few seconds, so this retries.
   */
  public EtcdMember addMember(boolean learner) {
    EtcdMember m = newMember("m" + members.size());
    Poll.until(
        "etcd to accept adding " + m.name(),
        Duration.ofSeconds(30),
        () -> {
          client.addMember(leader().orElseThrow().clientUrl(), m.peerUrl(), learner);
          return true;
        });
    members.add(m);
    return m;
  }

  private EtcdMember newMember(String name) {
    EtcdMember m = new EtcdMember(binary, name, baseDir);
    m.extraFlags(extraFlags);
    return m;
  }

  /**
   * A member that is not in the cluster yet (nobody added it): for tests that add it themselves,
   * e.g. through etcdctl with credentials. Closed with the cluster.
   */
  public EtcdMember newUnaddedMember() {
    EtcdMember m = newMember("m" + members.size());
    members.add(m);
    return m;
  }

  /** Starts a member with this initial cluster ({@code name=peerURL,...}) as a joining member. */
  public void startJoined(EtcdMember m, String initialCluster) {
    m.start(initialCluster, "existing", token);
  }

  /** Starts a member added with {@link #addMember}, joining the existing cluster. */
  public void startJoined(EtcdMember m) {
    String voter =
        leader().orElseThrow(() -> new IllegalStateException("no leader to ask")).clientUrl();
    List<String> entries = new ArrayList<>();
    for (Member info : client.members(voter)) {
      String name = info.getName().isEmpty() ? nameOf(info) : info.getName();
      for (String peer : info.getPeerURLsList()) {
        entries.add(name + "=" + peer);
      }
    }
    m.start(String.join(",", entries), "existing", token);
  }

  private String nameOf(Member info) {
    return members.stream()
        .filter(m -> info.getPeerURLsList().contains(m.peerUrl()))
        .map(EtcdMember::name)
        .findFirst()
        .orElseThrow();
  }

  @Override
  public void close() {
    members.forEach(EtcdMember::kill);
    client.close();
    deleteTree(baseDir);
  }

  private static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
