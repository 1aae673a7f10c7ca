package io.etcdmemberagent.app.join;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcdmemberagent.tls.ClusterCa;
import io.etcdmemberagent.tls.ClusterCa.Usage;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** When join reissues the applications' client certificate. */
class GeneratedTlsTest {

  @Test
  void theApplicationsCertificateIsReissuedWhenMissingFromAnotherSignerOrUnreadable()
      throws Exception {
    ClusterCa ca = ClusterCa.create("etcd-ca", Duration.ofDays(3650));
    String current =
        ca.issue(Usage.CLIENT, "etcd-client", List.of(), List.of(), Duration.ofDays(365)).certPem();
    Optional<String> trust = Optional.of(ca.trustBundlePem());
    assertThat(GeneratedTls.renewalReason(ca, Optional.of(current), trust)).isNull();
    assertThat(GeneratedTls.renewalReason(ca, Optional.empty(), trust)).isEqualTo("missing");
    ClusterCa other = ClusterCa.create("other", Duration.ofDays(3650));
    String foreign =
        other
            .issue(Usage.CLIENT, "etcd-client", List.of(), List.of(), Duration.ofDays(365))
            .certPem();
    assertThat(GeneratedTls.renewalReason(ca, Optional.of(foreign), trust))
        .isEqualTo("not signed by the current CA");
    assertThat(GeneratedTls.renewalReason(ca, Optional.of("garbage"), trust))
        .isEqualTo("not signed by the current CA");
    ClusterCa rotating =
        ClusterCa.parse(ca.signerPem() + other.signerPem(), ca.keyPem(), "Secret etcd-ca");
    assertThat(GeneratedTls.renewalReason(rotating, Optional.of(current), trust))
        .as("a rotation's first step: applications must come to trust the new CA too")
        .isEqualTo("the trusted CAs changed");
  }
}
