package io.etcdmemberagent.core.join;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EtcdConfigYamlTest {

  @Test
  void replacesOwnedTopLevelKeysKeepsTheRestAndQuotes() {
    String template =
        "listen-client-urls: http://0.0.0.0:2379\n"
            + "name: placeholder\n"
            + "client-transport-security:\n"
            + "  cert-file: /tls/tls.crt\n"
            + "  name: nested-stays\n"
            + "quota-backend-bytes: 2147483648\n";
    Map<String, String> owned = new LinkedHashMap<>();
    owned.put("name", "etcd-1");
    owned.put("initial-cluster", "etcd-0=https://a:2380,etcd-1=https://b:2380");
    owned.put("initial-cluster-state", "existing");
    owned.put("initial-cluster-token", "tok\"en");
    String out = EtcdConfigYaml.render(template, owned);
    assertThat(out)
        .contains("listen-client-urls: http://0.0.0.0:2379\n")
        .contains("  name: nested-stays\n")
        .contains("quota-backend-bytes: 2147483648\n")
        .contains("name: \"etcd-1\"\n")
        .contains("initial-cluster: \"etcd-0=https://a:2380,etcd-1=https://b:2380\"\n")
        .contains("initial-cluster-token: \"tok\\\"en\"\n")
        .doesNotContain("placeholder");
  }
}
