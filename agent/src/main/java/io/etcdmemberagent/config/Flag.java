package io.etcdmemberagent.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A command-line flag with its environment twin ({@code ETCD_MEMBER_AGENT_} + upper snake case) and
 * its default ({@code null} when there is none).
 */
public record Flag(String name, String defaultValue, String help) {

  public static final String ENV_PREFIX = "ETCD_MEMBER_AGENT_";

  /** The flags {@code run} and {@code join} share: TLS and authentication to etcd, and logging. */
  static final List<Flag> TLS_AND_LOGGING =
      List.of(
          new Flag("cacert", "", "PEM CA bundle that signs etcd's client certificate"),
          new Flag("cert", "", "PEM client certificate for etcd (with --key)"),
          new Flag("key", "", "PEM private key of --cert: PKCS#8, PKCS#1 RSA or EC"),
          new Flag("user", "", "etcd user to authenticate as (with --password-file)"),
          new Flag(
              "password-file",
              "",
              "file holding the password of --user (re-read when etcd refuses it or the token)"),
          new Flag("log-format", "text", "text or json, one line per event"),
          new Flag("log-level", "info", "debug, info, warn or error"));

  /** A subcommand's flags: its own, then the shared ones. */
  static List<Flag> withShared(Flag... own) {
    return withShared(List.of(own));
  }

  /** Groups of flags, in order. */
  @SafeVarargs
  static List<Flag> concat(List<Flag>... groups) {
    List<Flag> all = new ArrayList<>();
    for (List<Flag> group : groups) {
      all.addAll(group);
    }
    return all;
  }

  /** A subcommand's flags: its own, then the shared ones. */
  static List<Flag> withShared(List<Flag> own) {
    List<Flag> all = new ArrayList<>(own);
    all.addAll(TLS_AND_LOGGING);
    return List.copyOf(all);
  }

  public String envName() {
    return ENV_PREFIX + name.replace('-', '_').toUpperCase(Locale.ROOT);
  }

  public String display() {
    return "--" + name;
  }
}
