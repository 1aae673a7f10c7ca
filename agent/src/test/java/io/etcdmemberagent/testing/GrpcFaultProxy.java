package io.etcdmemberagent.testing;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC proxy in front of one etcd client URL that forwards every unary call as bytes, and can
 * break one method on purpose (where a TCP proxy cannot tell one call from another): {@link
 * Fault#LOSE_ANSWER} forwards the call, lets etcd apply it, and never answers the caller (its
 * deadline runs out); {@link Fault#FORWARD_THEN_CALL_BACK} forwards the call and at once runs a
 * hook (e.g. kill the member behind the proxy), so the call is in flight when the member dies. Each
 * fault applies to the next matching call only. Calls forwarded per method are counted.
 */
public final class GrpcFaultProxy implements AutoCloseable {

  public enum Fault {
    LOSE_ANSWER,
    FORWARD_THEN_CALL_BACK
  }

  /** A call as it reached the proxy: its method and what the proxy did with it. */
  public record Call(String method, String outcome) {}

  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private final ManagedChannel upstream;
  private final Server server;
  private final List<Call> calls = new CopyOnWriteArrayList<>();
  private volatile String faultyMethod;
  private volatile Fault fault;
  private volatile Runnable hook = () -> {};

  /** A proxy on a free loopback port in front of {@code targetUrl} ({@code http://host:port}). */
  public GrpcFaultProxy(String targetUrl) {
    URI target = URI.create(targetUrl);
    upstream =
        NettyChannelBuilder.forAddress(target.getHost(), target.getPort()).usePlaintext().build();
    try {
      server =
          NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", FreePorts.next()))
              .fallbackHandlerRegistry(
                  new io.grpc.HandlerRegistry() {
                    @Override
                    public ServerMethodDefinition<?, ?> lookupMethod(
                        String method, String authority) {
                      return forward(method);
                    }
                  })
              .build()
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start a gRPC proxy to " + targetUrl, e);
    }
  }

  public String url() {
    return "http://127.0.0.1:" + server.getPort();
  }

  /**
   * Breaks the next call of {@code fullMethod} (e.g. {@code etcdserverpb.Cluster/MemberPromote}).
   */
  public void breakNext(String fullMethod, Fault what, Runnable callback) {
    hook = callback == null ? () -> {} : callback;
    fault = what;
    faultyMethod = fullMethod;
  }

  /** Every call that reached the proxy, in order. */
  public List<Call> calls() {
    return List.copyOf(calls);
  }

  private ServerMethodDefinition<byte[], byte[]> forward(String fullMethod) {
    MethodDescriptor<byte[], byte[]> method =
        MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(fullMethod)
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();
    return ServerMethodDefinition.create(
        method, ServerCalls.asyncUnaryCall((request, answer) -> handle(method, request, answer)));
  }

  private void handle(
      MethodDescriptor<byte[], byte[]> method, byte[] request, StreamObserver<byte[]> answer) {
    String name = method.getFullMethodName();
    Fault now = null;
    synchronized (this) {
      if (name.equals(faultyMethod)) {
        now = fault;
        faultyMethod = null;
      }
    }
    Fault applied = now;
    ClientCalls.asyncUnaryCall(
        upstream.newCall(method, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS)),
        request,
        new StreamObserver<>() {
          private byte[] response;

          @Override
          public void onNext(byte[] value) {
            response = value;
          }

          @Override
          public void onError(Throwable t) {
            calls.add(new Call(name, "forwarded, etcd failed: " + Status.fromThrowable(t)));
            answer.onError(t);
          }

          @Override
          public void onCompleted() {
            if (applied == Fault.LOSE_ANSWER) {
              calls.add(new Call(name, "forwarded, etcd answered, answer lost"));
              return; // the caller waits until its deadline
            }
            calls.add(new Call(name, "forwarded, answered"));
            answer.onNext(response);
            answer.onCompleted();
          }
        });
    if (now == Fault.FORWARD_THEN_CALL_BACK) {
      hook.run();
    }
  }

  @Override
  public void close() {
    server.shutdownNow();
    upstream.shutdownNow();
    try {
      server.awaitTermination(2, TimeUnit.SECONDS);
      upstream.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
