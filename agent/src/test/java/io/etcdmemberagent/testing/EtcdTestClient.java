package io.etcdmemberagent.testing;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.ClusterGrpc;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.MaintenanceGrpc;
import io.etcd.jetcd.api.Member;
import io.etcd.jetcd.api.MemberAddRequest;
import io.etcd.jetcd.api.MemberListRequest;
import io.etcd.jetcd.api.MemberPromoteRequest;
import io.etcd.jetcd.api.MemberRemoveRequest;
import io.etcd.jetcd.api.PutRequest;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.StatusRequest;
import io.etcd.jetcd.api.StatusResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.handler.ssl.SslContext;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** A plain gRPC client for tests: ground truth about the cluster, loads, membership changes. */
public final class EtcdTestClient implements AutoCloseable {

  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final SslContext tls;

  public EtcdTestClient() {
    this(null);
  }

  /** The name the server certificate is checked for, instead of the endpoint's host. */
  private final String authority;

  private EtcdTestClient(SslContext tls) {
    this(tls, null);
  }

  private EtcdTestClient(SslContext tls, String authority) {
    this.tls = tls;
    this.authority = authority;
  }

  /** A client that trusts {@code ca} but has no certificate of its own. */
  public static EtcdTestClient withTrustOnly(Path ca, String authority) {
    try {
      return new EtcdTestClient(
          GrpcSslContexts.forClient().trustManager(ca.toFile()).build(), authority);
    } catch (javax.net.ssl.SSLException e) {
      throw new IllegalStateException("cannot build a TLS client trusting " + ca, e);
    }
  }

  /**
   * A client of {@code https} endpoints reached by IP whose certificate names {@code authority}
   * (the chart's generated server certificates cover {@code localhost}, not Pod IPs).
   */
  public static EtcdTestClient withTls(Path ca, Path cert, Path key, String authority) {
    try {
      return new EtcdTestClient(
          GrpcSslContexts.forClient()
              .trustManager(ca.toFile())
              .keyManager(cert.toFile(), key.toFile())
              .build(),
          authority);
    } catch (javax.net.ssl.SSLException e) {
      throw new IllegalStateException("cannot build a TLS client from " + cert, e);
    }
  }

  /** A client of {@code https} endpoints with a client certificate (PEM files). */
  public static EtcdTestClient withTls(Path ca, Path cert, Path key) {
    try {
      return new EtcdTestClient(
          GrpcSslContexts.forClient()
              .trustManager(ca.toFile())
              .keyManager(cert.toFile(), key.toFile())
              .build());
    } catch (javax.net.ssl.SSLException e) {
      throw new IllegalStateException("cannot build a TLS client from " + cert, e);
    }
  }

  private ManagedChannel channel(String endpoint) {
    return channels.computeIfAbsent(
        endpoint,
        e -> {
          URI uri = URI.create(e);
          NettyChannelBuilder b = NettyChannelBuilder.forAddress(uri.getHost(), uri.getPort());
          if (authority != null) {
            b.overrideAuthority(authority);
          }
          return (tls == null ? b.usePlaintext() : b.sslContext(tls)).build();
        });
  }

  public StatusResponse status(String endpoint) {
    return status(endpoint, 2000);
  }

  public StatusResponse status(String endpoint, long deadlineMillis) {
    return MaintenanceGrpc.newBlockingStub(channel(endpoint))
        .withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS)
        .status(StatusRequest.getDefaultInstance());
  }

  /** The member ID of the member at {@code endpoint}, asking until it answers or 30 s pass. */
  public long memberId(String endpoint) {
    long[] id = new long[1];
    Poll.until(
        endpoint + " to answer Status",
        java.time.Duration.ofSeconds(30),
        () -> {
          id[0] = status(endpoint, 1000).getHeader().getMemberId();
          return true;
        });
    return id[0];
  }

  public List<Member> members(String endpoint) {
    return members(endpoint, 5000);
  }

  public List<Member> members(String endpoint, long deadlineMillis) {
    return ClusterGrpc.newBlockingStub(channel(endpoint))
        .withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS)
        .memberList(MemberListRequest.getDefaultInstance())
        .getMembersList();
  }

  public void removeMember(String endpoint, long memberId) {
    ClusterGrpc.newBlockingStub(channel(endpoint))
        .withDeadlineAfter(5, TimeUnit.SECONDS)
        .memberRemove(MemberRemoveRequest.newBuilder().setID(memberId).build());
  }

  public long addMember(String endpoint, String peerUrl, boolean learner) {
    return ClusterGrpc.newBlockingStub(channel(endpoint))
        .withDeadlineAfter(5, TimeUnit.SECONDS)
        .memberAdd(MemberAddRequest.newBuilder().addPeerURLs(peerUrl).setIsLearner(learner).build())
        .getMember()
        .getID();
  }

  public void promote(String endpoint, long memberId) {
    ClusterGrpc.newBlockingStub(channel(endpoint))
        .withDeadlineAfter(5, TimeUnit.SECONDS)
        .memberPromote(MemberPromoteRequest.newBuilder().setID(memberId).build());
  }

  /** Asks the leader at {@code leaderEndpoint} to hand leadership to {@code target}. */
  public void moveLeader(String leaderEndpoint, long target) {
    MaintenanceGrpc.newBlockingStub(channel(leaderEndpoint))
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .moveLeader(io.etcd.jetcd.api.MoveLeaderRequest.newBuilder().setTargetID(target).build());
  }

  /** A linearizable get (the default), with a deadline. */
  public void get(String endpoint, String key, long deadlineMillis) {
    KVGrpc.newBlockingStub(channel(endpoint))
        .withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS)
        .range(RangeRequest.newBuilder().setKey(ByteString.copyFromUtf8(key)).build());
  }

  /** A linearizable get of {@code key}'s value as UTF-8, or null when there is none. */
  public String value(String endpoint, String key, long deadlineMillis) {
    var kvs =
        KVGrpc.newBlockingStub(channel(endpoint))
            .withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS)
            .range(RangeRequest.newBuilder().setKey(ByteString.copyFromUtf8(key)).build())
            .getKvsList();
    return kvs.isEmpty() ? null : kvs.get(0).getValue().toStringUtf8();
  }

  /**
   * {@code count} puts of {@code valueBytes} random bytes each under {@code prefix}, at most 64 in
   * flight: a cluster with a long raft log.
   */
  public void load(String endpoint, String prefix, int count, int valueBytes) {
    KVGrpc.KVFutureStub kv = KVGrpc.newFutureStub(channel(endpoint));
    java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(64);
    byte[] value = new byte[valueBytes];
    java.util.concurrent.ThreadLocalRandom.current().nextBytes(value);
    ByteString v = ByteString.copyFrom(value);
    java.util.concurrent.atomic.AtomicReference<Throwable> failed =
        new java.util.concurrent.atomic.AtomicReference<>();
    for (int i = 0; i < count && failed.get() == null; i++) {
      inFlight.acquireUninterruptibly();
      com.google.common.util.concurrent.ListenableFuture<?> f =
          kv.withDeadlineAfter(30, TimeUnit.SECONDS)
              .put(
                  PutRequest.newBuilder()
                      .setKey(ByteString.copyFromUtf8(prefix + i))
                      .setValue(v)
                      .build());
      f.addListener(
          () -> {
            try {
              f.get();
            } catch (Exception e) {
              failed.compareAndSet(null, e);
            }
            inFlight.release();
          },
          Runnable::run);
    }
    inFlight.acquireUninterruptibly(64);
    inFlight.release(64);
    if (failed.get() != null) {
      throw new IllegalStateException("loading " + endpoint + " failed", failed.get());
    }
  }

  /**
   * Puts 64 KiB values under {@code prefix} until etcd answers "database space exceeded" (a real
   * NOSPACE); returns how many puts it took.
   */
  public int fillUntilNoSpace(String endpoint, String prefix) {
    byte[] value = new byte[64 * 1024];
    for (int i = 0; i < 1000; i++) {
      try {
        put(endpoint, prefix + i, value);
      } catch (io.grpc.StatusRuntimeException e) {
        if (String.valueOf(e.getMessage()).contains("database space exceeded")) {
          return i;
        }
        throw e;
      }
    }
    throw new AssertionError("no NOSPACE after 1000 puts of 64 KiB");
  }

  public void put(String endpoint, String key, byte[] value) {
    put(endpoint, key, value, 10_000);
  }

  public void put(String endpoint, String key, byte[] value, long deadlineMillis) {
    KVGrpc.newBlockingStub(channel(endpoint))
        .withDeadlineAfter(deadlineMillis, TimeUnit.MILLISECONDS)
        .put(
            PutRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8(key))
                .setValue(ByteString.copyFrom(value))
                .build());
  }

  /**
   * Drops the channel to {@code endpoint}: the next call connects afresh instead of waiting out
   * gRPC's reconnect backoff after the endpoint was down.
   */
  public void forget(String endpoint) {
    ManagedChannel channel = channels.remove(endpoint);
    if (channel != null) {
      channel.shutdownNow();
    }
  }

  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
  }
}
