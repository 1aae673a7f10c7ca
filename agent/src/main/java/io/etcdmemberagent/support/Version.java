package io.etcdmemberagent.support;

/** The agent's version, from the jar manifest ("dev" when run from classes). */
public final class Version {
  private Version() {}

  public static String current() {
    String v = Version.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }
}
