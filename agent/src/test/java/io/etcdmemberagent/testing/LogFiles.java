package io.etcdmemberagent.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The last lines of a process's log file, for failure messages. */
public final class LogFiles {
  private LogFiles() {}

  public static String tail(Path log, int lines) {
    try {
      List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log " + log + ": " + e.getMessage() + ")";
    }
  }
}
