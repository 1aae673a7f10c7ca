package io.etcdmemberagent.core.publish;

import java.util.OptionalLong;

/**
 * The figures of an EtcdMember that move all the time (lag, db size): written with every
 * transition, otherwise at most once per resync interval. {@code quotaBytes} 0 when not known.
 */
public record MemberFigures(
    OptionalLong lagEntries, long dbSizeBytes, long dbSizeInUseBytes, long quotaBytes) {

  public static final MemberFigures NONE = new MemberFigures(OptionalLong.empty(), 0, 0, 0);

  /** The db size in per cent of the quota, when the quota is known. */
  public OptionalLong quotaUsedPercent() {
    return quotaBytes > 0 ? OptionalLong.of(dbSizeBytes * 100 / quotaBytes) : OptionalLong.empty();
  }

  /** The db size for people: bytes in binary units with one decimal, as in "2.5MiB". */
  public String dbSizeText() {
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    double size = dbSizeBytes;
    int unit = 0;
    while (size >= 1024 && unit < units.length - 1) {
      size /= 1024;
      unit++;
    }
    return unit == 0
        ? dbSizeBytes + "B"
        : String.format(java.util.Locale.ROOT, "%.1f%s", size, units[unit]);
  }
}
