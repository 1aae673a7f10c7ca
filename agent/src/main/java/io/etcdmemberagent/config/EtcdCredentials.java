package io.etcdmemberagent.config;

import java.nio.file.Path;
import java.util.Optional;

/**
 * etcd authentication by user name and password ({@code --user}, {@code --password-file}); both
 * empty means none (or client-certificate CN authentication through {@code --cert}).
 */
public record EtcdCredentials(Optional<String> user, Optional<Path> passwordFile) {

  public static EtcdCredentials none() {
    return new EtcdCredentials(Optional.empty(), Optional.empty());
  }

  /** {@code --user} and {@code --password-file} (a readable file), given together or not at all. */
  static EtcdCredentials parse(FlagValues v) throws ConfigException {
    Optional<String> user =
        v.optionalMatching("user", "[^\\s:]+", "an etcd user name (no spaces or colons)");
    Optional<Path> file = v.readableFile("password-file");
    if (user.isPresent() != file.isPresent()) {
      throw new ConfigException("--user and --password-file must be given together");
    }
    return new EtcdCredentials(user, file);
  }
}
