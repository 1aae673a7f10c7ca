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
  void theApplicationsCertificateIsReissuedWhenMissingFromAnotherSignerOrUnreadable() {
    ClusterCa ca = ClusterCa.create("etcd-ca", Duration.ofDays(3650));
    String current =
        ca.issue(Usage.CLIENT, "etcd-client", List.of(), List.of(), Duration.ofDays(365)).certPem();
    assertThat(GeneratedTls.renewalReason(ca, Optional.of(current))).isNull();
    assertThat(GeneratedTls.renewalReason(ca, Optional.empty())).isEqualTo("missing");
    ClusterCa other = ClusterCa.create("other", Duration.ofDays(3650));
    String foreign =
        other
            .issue(Usage.CLIENT, "etcd-client", List.of(), List.of(), Duration.ofDays(365))
            .certPem();
    assertThat(GeneratedTls.renewalReason(ca, Optional.of(foreign)))
        .isEqualTo("not signed by the current CA");
    assertThat(GeneratedTls.renewalReason(ca, Optional.of("garbage")))
        .isEqualTo("not signed by the current CA");
  }
}
