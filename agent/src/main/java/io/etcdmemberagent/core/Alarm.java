package io.etcdmemberagent.core;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** An etcd alarm as listed in {@code Status.errors}: {@code memberID:<id> alarm:<TYPE>}. */
public record Alarm(long memberId, String type) {

  private static final Pattern TEXT = Pattern.compile("memberID:\\s*(\\d+)\\s+alarm:\\s*(\\w+)");

  /** The alarms among a Status answer's error strings; other errors are ignored. */
  public static List<Alarm> parseAll(List<String> errors) {
    List<Alarm> alarms = new ArrayList<>();
    for (String error : errors) {
      Matcher m = TEXT.matcher(error);
      if (m.find()) {
        alarms.add(new Alarm(Long.parseUnsignedLong(m.group(1)), m.group(2)));
      }
    }
    return alarms;
  }
}
