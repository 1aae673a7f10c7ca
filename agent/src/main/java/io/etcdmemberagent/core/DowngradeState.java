package io.etcdmemberagent.core;

/**
 * etcd 3.6+ {@code Status.downgradeInfo}: whether a cluster downgrade is under way, and to what.
 */
public record DowngradeState(boolean enabled, String targetVersion) {

  public static final DowngradeState NONE = new DowngradeState(false, "");
}
