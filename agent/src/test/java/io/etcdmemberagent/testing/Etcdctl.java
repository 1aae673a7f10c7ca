package io.etcdmemberagent.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * The real etcdctl (3.6's, built beside etcd 3.6; it speaks to 3.4–3.7 servers alike) against one
 * endpoint, optionally as a user: for what the tests need done as root once etcd auth is on.
 */
public final class Etcdctl {

  private final String endpoint;
  private final List<String> credentials;

  private Etcdctl(String endpoint, List<String> credentials) {
    this.endpoint = endpoint;
    this.credentials = credentials;
  }

  public static Etcdctl at(String endpoint) {
    return new Etcdctl(endpoint, List.of());
  }

  public Etcdctl as(String user, String password) {
    return new Etcdctl(endpoint, List.of("--user=" + user + ":" + password));
  }

  /** Over mutual TLS with this client certificate (its CN is the user where auth is on). */
  public Etcdctl withTls(java.nio.file.Path ca, java.nio.file.Path cert, java.nio.file.Path key) {
    return new Etcdctl(endpoint, List.of("--cacert=" + ca, "--cert=" + cert, "--key=" + key));
  }

  /** Runs one command and returns what it printed; fails when etcdctl exits non-zero. */
  public String run(String... args) {
    return Processes.output(command(args));
  }

  /** Runs one command whatever its exit status. */
  public Processes.Result attempt(String... args) {
    return Processes.run(command(args));
  }

  /** Adds users {@code root} (with the root role) and any others without roles, then auth on. */
  public void enableAuth(String rootPassword, String... otherUsersAndPasswords) {
    run("user", "add", "root:" + rootPassword);
    run("user", "grant-role", "root", "root");
    for (String other : otherUsersAndPasswords) {
      run("user", "add", other);
    }
    run("auth", "enable");
  }

  private String[] command(String... args) {
    List<String> all = new ArrayList<>();
    all.add(EtcdBinaries.etcdctl("3.6").toString());
    all.add("--endpoints=" + endpoint);
    all.add("--dial-timeout=3s");
    all.add("--command-timeout=5s");
    all.addAll(credentials);
    all.addAll(List.of(args));
    return all.toArray(String[]::new);
  }
}
