package io.etcdmemberagent.etcd;

import io.etcd.jetcd.api.AlarmRequest;
import io.etcd.jetcd.api.AlarmResponse;
import io.etcd.jetcd.api.AlarmType;
import io.etcd.jetcd.api.ClusterGrpc;
import io.etcd.jetcd.api.MaintenanceGrpc;
import io.etcd.jetcd.api.Member;
import io.etcd.jetcd.api.MemberAddRequest;
import io.etcd.jetcd.api.MemberAddResponse;
import io.etcd.jetcd.api.MemberListRequest;
import io.etcd.jetcd.api.MemberListResponse;
import io.etcd.jetcd.api.MemberPromoteRequest;
import io.etcd.jetcd.api.MemberRemoveRequest;
import io.etcd.jetcd.api.StatusRequest;
import io.etcd.jetcd.api.StatusResponse;
import io.etcdmemberagent.core.AddAnswer;
import io.etcdmemberagent.core.Alarm;
import io.etcdmemberagent.core.ChangeAnswer;
import io.etcdmemberagent.core.EtcdGateway;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@link EtcdGateway} over etcd's gRPC API (jetcd's generated stubs), one channel per endpoint,
 * every call with a deadline and without wait-for-ready, so TLS and connection errors surface at
 * once instead of hanging until the deadline.
 */
public final class GrpcEtcdGateway implements EtcdGateway {

  private final EtcdChannels channels;
  private final Duration timeout;

  public GrpcEtcdGateway(ClientTls tls, Duration timeout) {
    this.channels = new EtcdChannels(tls, timeout);
    this.timeout = timeout;
  }

  /** New client TLS material for connections from now on (certificate rotation). */
  public void useTls(ClientTls tls) {
    channels.useTls(tls);
  }

  @Override
  public LocalObservation status(String endpoint) {
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      StatusResponse r =
          MaintenanceGrpc.newBlockingStub(channels.forEndpoint(endpoint, deadline))
              .withDeadlineAfter(remaining(deadline), TimeUnit.NANOSECONDS)
              .status(StatusRequest.getDefaultInstance());
      return new LocalObservation.Answered(
          new LocalStatus(
              r.getHeader().getMemberId(),
              r.getLeader(),
              r.getRaftIndex(),
              r.getRaftAppliedIndex(),
              r.getRaftTerm(),
              r.getDbSize(),
              r.getDbSizeInUse(),
              r.getIsLearner(),
              r.getVersion(),
              List.copyOf(r.getErrorsList())));
    } catch (StatusRuntimeException e) {
      return classify(endpoint, e);
    } catch (RuntimeException e) {
      return new LocalObservation.Failed(endpoint + ": " + e);
    }
  }

  @Override
  public Optional<List<Alarm>> alarmList(String endpoint) {
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      AlarmResponse r =
          MaintenanceGrpc.newBlockingStub(channels.forEndpoint(endpoint, deadline))
              .withDeadlineAfter(remaining(deadline), TimeUnit.NANOSECONDS)
              .alarm(
                  AlarmRequest.newBuilder()
                      .setAction(AlarmRequest.AlarmAction.GET)
                      .setAlarm(AlarmType.NONE)
                      .build());
      return Optional.of(
          r.getAlarmsList().stream()
              .map(a -> new Alarm(a.getMemberID(), a.getAlarm().name()))
              .toList());
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  @Override
  public Membership memberList(String endpoint) {
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      MemberListResponse r =
          ClusterGrpc.newBlockingStub(channels.forEndpoint(endpoint, deadline))
              .withDeadlineAfter(remaining(deadline), TimeUnit.NANOSECONDS)
              .memberList(MemberListRequest.getDefaultInstance());
      List<MemberInfo> members = r.getMembersList().stream().map(GrpcEtcdGateway::member).toList();
      return new Membership.Known(members, endpoint);
    } catch (StatusRuntimeException e) {
      return new Membership.Unknown(endpoint + ": " + describe(e));
    } catch (RuntimeException e) {
      return new Membership.Unknown(endpoint + ": " + e);
    }
  }

  @Override
  public AddAnswer addLearner(String endpoint, List<String> peerUrls) {
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      MemberAddResponse r =
          ClusterGrpc.newBlockingStub(channels.forEndpoint(endpoint, deadline))
              .withDeadlineAfter(remaining(deadline), TimeUnit.NANOSECONDS)
              .memberAdd(
                  MemberAddRequest.newBuilder()
                      .addAllPeerURLs(peerUrls)
                      .setIsLearner(true)
                      .build());
      List<MemberInfo> members = r.getMembersList().stream().map(GrpcEtcdGateway::member).toList();
      return new AddAnswer.Added(member(r.getMember()), new Membership.Known(members, endpoint));
    } catch (StatusRuntimeException e) {
      return new AddAnswer.Error(e.getStatus().getCode().name(), message(e));
    } catch (RuntimeException e) {
      return new AddAnswer.Error("UNKNOWN", e.toString());
    }
  }

  @Override
  public ChangeAnswer removeMember(String endpoint, long memberId) {
    return change(
        endpoint,
        stub -> stub.memberRemove(MemberRemoveRequest.newBuilder().setID(memberId).build()));
  }

  @Override
  public ChangeAnswer promote(String endpoint, long memberId) {
    return change(
        endpoint,
        stub -> stub.memberPromote(MemberPromoteRequest.newBuilder().setID(memberId).build()));
  }

  /** One membership change through one endpoint, with the deadline; never retried. */
  private ChangeAnswer change(String endpoint, Consumer<ClusterGrpc.ClusterBlockingStub> call) {
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      call.accept(
          ClusterGrpc.newBlockingStub(channels.forEndpoint(endpoint, deadline))
              .withDeadlineAfter(remaining(deadline), TimeUnit.NANOSECONDS));
      return new ChangeAnswer.Accepted();
    } catch (StatusRuntimeException e) {
      return new ChangeAnswer.Error(e.getStatus().getCode().name(), message(e));
    } catch (RuntimeException e) {
      return new ChangeAnswer.Error("UNKNOWN", e.toString());
    }
  }

  /** etcd's own message when it sent one (the texts to match), else a description. */
  private String message(StatusRuntimeException e) {
    String description = e.getStatus().getDescription();
    return description == null ? describe(e) : description;
  }

  /** At least a millisecond, so a spent budget still gives a call that fails as a timeout. */
  private static long remaining(long deadlineNanos) {
    return Math.max(1_000_000L, deadlineNanos - System.nanoTime());
  }

  private static MemberInfo member(Member m) {
    return new MemberInfo(
        m.getID(),
        m.getName(),
        List.copyOf(m.getPeerURLsList()),
        List.copyOf(m.getClientURLsList()),
        m.getIsLearner());
  }

  private LocalObservation classify(String endpoint, StatusRuntimeException e) {
    String detail = endpoint + ": " + describe(e);
    if (e.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED) {
      return new LocalObservation.TimedOut(detail);
    }
    if (causedByRefusal(e)) {
      return new LocalObservation.Refused(detail);
    }
    return new LocalObservation.Failed(detail);
  }

  private static boolean causedByRefusal(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ConnectException) {
        return true;
      }
    }
    return false;
  }

  /** gRPC code and description, without a stack trace: this text ends up in /readyz. */
  private String describe(StatusRuntimeException e) {
    Status s = e.getStatus();
    if (s.getCode() == Status.Code.DEADLINE_EXCEEDED) {
      return "no answer within " + timeout.toMillis() + "ms";
    }
    StringBuilder out = new StringBuilder(s.getCode().name());
    if (s.getDescription() != null) {
      out.append(": ").append(s.getDescription());
    }
    if (s.getCause() != null && s.getCause().getMessage() != null) {
      out.append(" (").append(s.getCause().getMessage()).append(')');
    }
    return out.toString();
  }

  @Override
  public void close() {
    channels.close();
  }
}
