package io.etcdmemberagent.etcd;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * One long-lived gRPC channel per etcd client URL, sharing a single event-loop thread. Channels are
 * opened on first use and kept; etcd clusters have a handful of members.
 */
final class EtcdChannels implements AutoCloseable {

  private final EventLoopGroup eventLoop = new NioEventLoopGroup(1, daemonThreads());
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final Duration connectTimeout;
  private volatile SslContext sslContext;

  EtcdChannels(ClientTls tls, Duration connectTimeout) {
    this.sslContext = sslContext(tls);
    this.connectTimeout = connectTimeout;
  }

  /**
   * Uses new TLS material for every connection from now on: the context is built first (a failure
   * leaves the old one in use), then the https channels are closed so the next call opens a fresh
   * one with the new certificate.
   */
  void useTls(ClientTls tls) {
    SslContext next = sslContext(tls);
    sslContext = next;
    channels
        .entrySet()
        .removeIf(
            e -> {
              if (e.getKey().startsWith("https:")) {
                e.getValue().shutdown();
                return true;
              }
              return false;
            });
  }

  private static java.util.concurrent.ThreadFactory daemonThreads() {
    return r -> {
      Thread t = new Thread(r, "etcd-grpc");
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * The channel for an endpoint, with a fresh connection attempt when the last one failed. gRPC
   * would otherwise wait out its reconnect backoff (up to minutes) and fail every call at once with
   * the old error; the agent polls on its own schedule and wants the truth now. Waits at most until
   * {@code deadlineNanos} (a {@link System#nanoTime()} value) for that attempt.
   */
  ManagedChannel forEndpoint(String endpoint, long deadlineNanos) {
    ManagedChannel channel = channels.computeIfAbsent(endpoint, this::open);
    if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
      channel.resetConnectBackoff();
      awaitLeaving(channel, ConnectivityState.TRANSIENT_FAILURE, deadlineNanos);
      awaitLeaving(channel, ConnectivityState.CONNECTING, deadlineNanos);
    }
    return channel;
  }

  /** The endpoints a channel is open to. */
  java.util.List<String> endpoints() {
    return java.util.List.copyOf(channels.keySet());
  }

  private static void awaitLeaving(
      ManagedChannel channel, ConnectivityState state, long deadlineNanos) {
    if (channel.getState(false) != state) {
      return;
    }
    CountDownLatch changed = new CountDownLatch(1);
    channel.notifyWhenStateChanged(state, changed::countDown);
    try {
      changed.await(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private ManagedChannel open(String endpoint) {
    URI uri = URI.create(endpoint);
    NettyChannelBuilder builder =
        NettyChannelBuilder.forAddress(uri.getHost(), uri.getPort())
            .eventLoopGroup(eventLoop)
            .channelType(NioSocketChannel.class)
            .directExecutor()
            // the poll is the retry: a failed call is asked again on the next poll, so gRPC's
            // transparent retries only cost a buffering stream around every call
            .disableRetry()
            .withOption(
                io.netty.channel.ChannelOption.CONNECT_TIMEOUT_MILLIS,
                (int) connectTimeout.toMillis())
            .maxInboundMessageSize(16 * 1024 * 1024);
    if ("https".equals(uri.getScheme())) {
      builder.sslContext(sslContext);
    } else {
      builder.usePlaintext();
    }
    return builder.build();
  }

  private static SslContext sslContext(ClientTls tls) {
    try {
      SslContextBuilder ssl = GrpcSslContexts.forClient();
      if (!tls.trusted().isEmpty()) {
        ssl.trustManager(tls.trusted());
      }
      if (tls.key().isPresent() && !tls.chain().isEmpty()) {
        ssl.keyManager(tls.key().get(), tls.chain());
      }
      return ssl.build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalStateException(
          "cannot build the TLS context for etcd: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    channels.values().forEach(ManagedChannel::shutdownNow);
    for (ManagedChannel channel : channels.values()) {
      try {
        channel.awaitTermination(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    eventLoop.shutdownGracefully(0, 2, TimeUnit.SECONDS);
  }
}
