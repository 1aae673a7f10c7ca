package io.etcdmemberagent.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.core.Membership;
import io.etcdmemberagent.testing.EtcdBinaries;
import io.etcdmemberagent.testing.EtcdCluster;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@code linearizable} field that jetcd 0.8.7's {@code MemberListRequest} lacks travels as an
 * unknown field 1, and real etcd honours it: with quorum lost, a member still lists its local view
 * on a plain {@code MemberList}, but refuses a linearizable one (it cannot confirm it is current).
 * etcd 3.4 has no such field and answers both from its local view.
 */
class LinearizableMemberListIT {

  static Stream<String> versions() {
    return EtcdBinaries.withOldest().stream();
  }

  @ParameterizedTest(name = "etcd {0}")
  @MethodSource("versions")
  void aLinearizableListNeedsAQuorumWhereAPlainOneDoesNot(String version) {
    try (EtcdCluster cluster = EtcdCluster.start(version, 3);
        GrpcEtcdGateway gateway = new GrpcEtcdGateway(ClientTls.none(), Duration.ofSeconds(2))) {
      cluster.awaitLeader(Duration.ofSeconds(30));
      String survivor = cluster.member(0).clientUrl();
      assertThat(gateway.linearizableMemberList(survivor))
          .as("with a quorum both answer")
          .isInstanceOfSatisfying(Membership.Known.class, k -> assertThat(k.members()).hasSize(3));
      cluster.member(1).kill();
      cluster.member(2).kill();
      assertThat(gateway.memberList(survivor))
          .as("the plain list is the member's local view")
          .isInstanceOf(Membership.Known.class);
      Membership linearizable = gateway.linearizableMemberList(survivor);
      if (version.equals("3.4")) {
        assertThat(linearizable).as("3.4 ignores the field").isInstanceOf(Membership.Known.class);
      } else {
        assertThat(linearizable)
            .as("no quorum, no linearizable answer")
            .isInstanceOf(Membership.Unknown.class);
      }
    }
  }
}
