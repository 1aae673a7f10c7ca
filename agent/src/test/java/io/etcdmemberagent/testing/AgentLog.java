package io.etcdmemberagent.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The agent's JSON log lines, searchable by event and field. */
public record AgentLog(List<String> lines) {

  public static AgentLog of(String output) {
    return new AgentLog(output.lines().filter(l -> l.startsWith("{")).toList());
  }

  public Optional<String> first(String event, String... contains) {
    return lines.stream()
        .filter(l -> l.contains("\"event\":\"" + event + "\""))
        .filter(l -> List.of(contains).stream().allMatch(l::contains))
        .findFirst();
  }

  public static long seq(String line) {
    return Long.parseLong(field(line, "seq"));
  }

  public static Instant ts(String line) {
    return Instant.parse(field(line, "ts"));
  }

  public static Duration between(String earlier, String later) {
    return Duration.between(ts(earlier), ts(later));
  }

  public static String field(String line, String name) {
    Matcher m = Pattern.compile("\"" + name + "\":\"?([^\",}]*)").matcher(line);
    if (!m.find()) {
      throw new IllegalArgumentException("no " + name + " in " + line);
    }
    return m.group(1);
  }
}
