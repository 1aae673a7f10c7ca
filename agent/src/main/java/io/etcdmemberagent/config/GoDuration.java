package io.etcdmemberagent.config;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses durations as Go and etcd users write them: {@code 500ms}, {@code 2s}, {@code 1m30s}. */
public final class GoDuration {

  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)");
  private static final Map<String, Long> NANOS_PER_UNIT =
      Map.of(
          "ns", 1L,
          "us", 1_000L,
          "µs", 1_000L,
          "ms", 1_000_000L,
          "s", 1_000_000_000L,
          "m", 60_000_000_000L,
          "h", 3_600_000_000_000L);

  private GoDuration() {}

  /** The duration, or empty-handed with {@link IllegalArgumentException} when malformed. */
  public static Duration parse(String text) {
    if (text.equals("0")) {
      return Duration.ZERO;
    }
    Matcher m = PART.matcher(text);
    int at = 0;
    BigDecimal nanos = BigDecimal.ZERO;
    while (at < text.length() && m.find(at) && m.start() == at) {
      BigDecimal unit = BigDecimal.valueOf(NANOS_PER_UNIT.get(m.group(2)));
      nanos = nanos.add(new BigDecimal(m.group(1)).multiply(unit));
      at = m.end();
    }
    if (at == 0 || at != text.length()) {
      throw new IllegalArgumentException("not a duration: " + text);
    }
    return Duration.ofNanos(nanos.longValueExact());
  }

  /** Formats a duration back the way Go would print it, for messages. */
  public static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    if (d.toNanos() % 1_000_000_000L == 0) {
      long s = d.toSeconds();
      return s % 3600 == 0 ? (s / 3600) + "h" : s % 60 == 0 ? (s / 60) + "m" : s + "s";
    }
    if (d.toNanos() % 1_000_000L == 0) {
      return d.toMillis() + "ms";
    }
    return d.toNanos() + "ns";
  }
}
