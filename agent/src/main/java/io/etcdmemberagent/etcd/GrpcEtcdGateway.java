package io.etcdmemberagent.etcd;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
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
import io.etcd.jetcd.api.MoveLeaderRequest;
import io.etcd.jetcd.api.StatusRequest;
import io.etcd.jetcd.api.StatusResponse;
import io.etcdmemberagent.core.AddAnswer;
import io.etcdmemberagent.core.Alarm;
import io.etcdmemberagent.core.CallFailure;
import io.etcdmemberagent.core.ChangeAnswer;
import io.etcdmemberagent.core.DowngradeState;
import io.etcdmemberagent.core.EtcdGateway;
import io.etcdmemberagent.core.LocalObservation;
import io.etcdmemberagent.core.LocalStatus;
import io.etcdmemberagent.core.MemberInfo;
import io.etcdmemberagent.core.Membership;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.AbstractBlockingStub;
import io.grpc.stub.MetadataUtils;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * {@link EtcdGateway} over etcd's gRPC API (jetcd's generated stubs), one channel per endpoint,
 * every call with a deadline and without wait-for-ready, so TLS and connection errors surface at
 * once instead of hanging until the deadline. With a {@link EtcdLogin} every call carries etcd's
 * auth token; a token etcd no longer knows is replaced once and the call sent again (etcd refuses
 * it before doing anything, so even a promote is safe to resend).
 */
public final class GrpcEtcdGateway implements EtcdGateway {

  /** etcd 3.6+ {@code StatusResponse} fields that jetcd's generated stubs (up to field 10) lack. */
  private static final int STORAGE_VERSION = 11;

  private static final int DB_SIZE_QUOTA = 12;
  private static final int DOWNGRADE_INFO = 13;

  private final EtcdChannels channels;
  private final Duration timeout;
  private final Optional<EtcdTokens> tokens;

  public GrpcEtcdGateway(ClientTls tls, Duration timeout) {
    this(tls, timeout, Optional.empty(), List.of());
  }

  /**
   * {@code authEndpoints}: where to authenticate when the endpoint called cannot (a learner refuses
   * {@code Authenticate}), before the other endpoints this gateway has talked to.
   */
  public GrpcEtcdGateway(
      ClientTls tls, Duration timeout, Optional<EtcdLogin> login, List<String> authEndpoints) {
    this.channels = new EtcdChannels(tls, timeout);
    this.timeout = timeout;
    List<String> first = List.copyOf(authEndpoints);
    this.tokens =
        login.map(
            l ->
                new EtcdTokens(
                    l,
                    channels::forEndpoint,
                    () ->
                        java.util.stream.Stream.concat(
                                first.stream(), channels.endpoints().stream())
                            .distinct()
                            .toList()));
  }

  /** New client TLS material for connections from now on (certificate rotation). */
  public void useTls(ClientTls tls) {
    channels.useTls(tls);
  }

  @Override
  public LocalObservation status(String endpoint) {
    try {
      StatusResponse r =
          call(
              endpoint,
              MaintenanceGrpc::newBlockingStub,
              stub -> stub.status(StatusRequest.getDefaultInstance()));
      UnknownFieldSet newer = r.getUnknownFields();
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
              List.copyOf(r.getErrorsList()),
              text(newer, STORAGE_VERSION),
              varint(newer, DB_SIZE_QUOTA),
              downgrade(newer),
              r.getHeader().getClusterId()));
    } catch (StatusRuntimeException e) {
      return classify(endpoint, e);
    } catch (RuntimeException e) {
      return new LocalObservation.Failed(endpoint + ": " + e);
    }
  }

  @Override
  public Optional<List<Alarm>> alarmList(String endpoint) {
    try {
      AlarmResponse r =
          call(
              endpoint,
              MaintenanceGrpc::newBlockingStub,
              stub ->
                  stub.alarm(
                      AlarmRequest.newBuilder()
                          .setAction(AlarmRequest.AlarmAction.GET)
                          .setAlarm(AlarmType.NONE)
                          .build()));
      return Optional.of(
          r.getAlarmsList().stream()
              .map(a -> new Alarm(a.getMemberID(), a.getAlarm().name()))
              .toList());
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /**
   * {@code linearizable} is field 1 of etcd 3.5's {@code MemberListRequest}; jetcd 0.8.7's
   * generated message predates it, so it travels as an unknown field with the same wire encoding.
   */
  private static final MemberListRequest LINEARIZABLE_MEMBER_LIST =
      MemberListRequest.newBuilder()
          .setUnknownFields(
              UnknownFieldSet.newBuilder()
                  .addField(1, UnknownFieldSet.Field.newBuilder().addVarint(1).build())
                  .build())
          .build();

  @Override
  public Membership memberList(String endpoint) {
    return memberList(endpoint, MemberListRequest.getDefaultInstance());
  }

  @Override
  public Membership linearizableMemberList(String endpoint) {
    return memberList(endpoint, LINEARIZABLE_MEMBER_LIST);
  }

  private Membership memberList(String endpoint, MemberListRequest request) {
    try {
      MemberListResponse r =
          call(endpoint, ClusterGrpc::newBlockingStub, stub -> stub.memberList(request));
      List<MemberInfo> members = r.getMembersList().stream().map(GrpcEtcdGateway::member).toList();
      return new Membership.Known(members, endpoint, r.getHeader().getClusterId());
    } catch (StatusRuntimeException e) {
      return new Membership.Unknown("MemberList via " + endpoint + ": " + describe(e), failure(e));
    } catch (RuntimeException e) {
      return new Membership.Unknown(endpoint + ": " + e);
    }
  }

  @Override
  public AddAnswer addLearner(String endpoint, List<String> peerUrls) {
    try {
      MemberAddResponse r =
          call(
              endpoint,
              ClusterGrpc::newBlockingStub,
              stub ->
                  stub.memberAdd(
                      MemberAddRequest.newBuilder()
                          .addAllPeerURLs(peerUrls)
                          .setIsLearner(true)
                          .build()));
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
  public ChangeAnswer moveLeader(String leaderEndpoint, long transfereeId) {
    try {
      call(
          leaderEndpoint,
          MaintenanceGrpc::newBlockingStub,
          stub ->
              stub.moveLeader(MoveLeaderRequest.newBuilder().setTargetID(transfereeId).build()));
      return new ChangeAnswer.Accepted();
    } catch (StatusRuntimeException e) {
      return new ChangeAnswer.Error(e.getStatus().getCode().name(), message(e));
    } catch (RuntimeException e) {
      return new ChangeAnswer.Error("UNKNOWN", e.toString());
    }
  }

  @Override
  public ChangeAnswer promote(String endpoint, long memberId) {
    return change(
        endpoint,
        stub -> stub.memberPromote(MemberPromoteRequest.newBuilder().setID(memberId).build()));
  }

  /** One membership change through one endpoint, with the deadline; never retried. */
  private ChangeAnswer change(
      String endpoint, Function<ClusterGrpc.ClusterBlockingStub, ?> request) {
    try {
      call(endpoint, ClusterGrpc::newBlockingStub, request);
      return new ChangeAnswer.Accepted();
    } catch (StatusRuntimeException e) {
      return new ChangeAnswer.Error(e.getStatus().getCode().name(), message(e));
    } catch (RuntimeException e) {
      return new ChangeAnswer.Error("UNKNOWN", e.toString());
    }
  }

  /**
   * One RPC through one endpoint within one deadline, carrying the auth token when there is a
   * login. A token etcd calls invalid is dropped and the RPC sent once more with a fresh one.
   */
  private <S extends AbstractBlockingStub<S>, R> R call(
      String endpoint, Function<Channel, S> stubFor, Function<S, R> rpc) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (int attempt = 1; ; attempt++) {
      S stub = stubFor.apply(channels.forEndpoint(endpoint, deadline));
      String token = null;
      if (tokens.isPresent()) {
        token = tokens.get().token(endpoint, deadline);
        Metadata headers = new Metadata();
        headers.put(EtcdTokens.TOKEN, token);
        stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
      }
      try {
        return rpc.apply(stub.withDeadlineAfter(remaining(deadline), TimeUnit.NANOSECONDS));
      } catch (StatusRuntimeException e) {
        if (token == null || attempt > 1 || !invalidToken(e)) {
          throw e;
        }
        tokens.get().forget(token);
      }
    }
  }

  private static boolean invalidToken(StatusRuntimeException e) {
    String description = e.getStatus().getDescription();
    return description != null && description.endsWith("etcdserver: invalid auth token");
  }

  /** etcd's own message when it sent one (the texts to match), else a description. */
  private String message(StatusRuntimeException e) {
    String description = e.getStatus().getDescription();
    return description == null ? describe(e) : description;
  }

  private static CallFailure failure(StatusRuntimeException e) {
    return CallFailure.classify(e.getStatus().getCode().name(), e.getStatus().getDescription());
  }

  /** At least a millisecond, so a spent budget still gives a call that fails as a timeout. */
  private static long remaining(long deadlineNanos) {
    return Math.max(1_000_000L, deadlineNanos - System.nanoTime());
  }

  private static String text(UnknownFieldSet fields, int number) {
    List<ByteString> values =
        fields.hasField(number) ? fields.getField(number).getLengthDelimitedList() : List.of();
    return values.isEmpty() ? "" : values.get(values.size() - 1).toStringUtf8();
  }

  private static long varint(UnknownFieldSet fields, int number) {
    List<Long> values =
        fields.hasField(number) ? fields.getField(number).getVarintList() : List.of();
    return values.isEmpty() ? 0 : values.get(values.size() - 1);
  }

  /** {@code DowngradeInfo}: {@code enabled} = 1, {@code targetVersion} = 2. */
  private static DowngradeState downgrade(UnknownFieldSet fields) {
    List<ByteString> values =
        fields.hasField(DOWNGRADE_INFO)
            ? fields.getField(DOWNGRADE_INFO).getLengthDelimitedList()
            : List.of();
    if (values.isEmpty()) {
      return DowngradeState.NONE;
    }
    try {
      UnknownFieldSet info = UnknownFieldSet.parseFrom(values.get(values.size() - 1));
      return new DowngradeState(varint(info, 1) != 0, text(info, 2));
    } catch (InvalidProtocolBufferException e) {
      return DowngradeState.NONE;
    }
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
    CallFailure failure = failure(e);
    if (failure.denial()) {
      return new LocalObservation.Denied(failure, "Status via " + detail);
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
