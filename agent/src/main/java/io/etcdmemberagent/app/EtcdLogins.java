package io.etcdmemberagent.app;

import io.etcdmemberagent.config.EtcdCredentials;
import io.etcdmemberagent.etcd.EtcdLogin;
import java.util.Optional;

/** From the configured credentials to the etcd adapter's login (the adapters do not meet). */
public final class EtcdLogins {
  private EtcdLogins() {}

  public static Optional<EtcdLogin> of(EtcdCredentials credentials) {
    return credentials.user().map(user -> new EtcdLogin(user, credentials.passwordFile().get()));
  }
}
