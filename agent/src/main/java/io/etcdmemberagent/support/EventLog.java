package io.etcdmemberagent.support;

import java.io.PrintStream;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;

/**
 * One line per event on stderr, as {@code text} ({@code ts LEVEL event key=value ...}) or {@code
 * json}. The agent's own events are written directly, so they still appear while the JVM shuts down
 * (java.util.logging resets its handlers then). Libraries log through java.util.logging (Jetty via
 * slf4j-jdk14, gRPC, Netty) into the same format, at WARN and above whatever the level: their debug
 * output is frame and selector traces (tens of MB a minute), not what {@code debug} promises.
 */
public final class EventLog {

  private static final Object LOCK = new Object();
  private static volatile PrintStream out = System.err;
  private static volatile boolean json;
  private static volatile Level threshold = Level.INFO;

  private EventLog() {}

  public static void configure(String format, String level, PrintStream stream) {
    out = stream;
    json = format.equals("json");
    threshold = parse(level);
    LogManager.getLogManager().reset();
    Handler handler =
        new StreamHandler(stream, new LibraryFormat()) {
          @Override
          public synchronized void publish(LogRecord record) {
            super.publish(record);
            flush();
          }
        };
    handler.setLevel(Level.ALL);
    Logger root = Logger.getLogger("");
    root.addHandler(handler);
    root.setLevel(Level.WARNING);
  }

  private static Level parse(String level) {
    return switch (level) {
      case "debug" -> Level.FINE;
      case "warn" -> Level.WARNING;
      case "error" -> Level.SEVERE;
      default -> Level.INFO;
    };
  }

  public static void info(String event, Object... keyValues) {
    log(Level.INFO, event, keyValues);
  }

  public static void warn(String event, Object... keyValues) {
    log(Level.WARNING, event, keyValues);
  }

  public static void debug(String event, Object... keyValues) {
    log(Level.FINE, event, keyValues);
  }

  public static void error(String event, Object... keyValues) {
    log(Level.SEVERE, event, keyValues);
  }

  private static void log(Level level, String event, Object... keyValues) {
    if (level.intValue() < threshold.intValue()) {
      return;
    }
    Map<String, Object> fields = new LinkedHashMap<>();
    for (int i = 0; i + 1 < keyValues.length; i += 2) {
      fields.put(String.valueOf(keyValues[i]), keyValues[i + 1]);
    }
    String line = line(Instant.now(), level, null, event, fields);
    synchronized (LOCK) {
      out.print(line);
      out.flush();
    }
  }

  static String line(
      Instant ts, Level level, String logger, String event, Map<String, Object> fields) {
    if (json) {
      Map<String, Object> doc = new LinkedHashMap<>();
      doc.put("ts", ts.toString());
      doc.put("level", levelName(level));
      if (logger != null) {
        doc.put("logger", logger);
      }
      doc.put("event", event);
      doc.putAll(fields);
      return Json.write(doc) + "\n";
    }
    StringBuilder text = new StringBuilder();
    text.append(ts).append(' ').append(levelName(level)).append(' ');
    if (logger != null) {
      text.append('[').append(logger).append("] ");
    }
    text.append(event.replace('\n', ' '));
    fields.forEach((k, v) -> text.append(' ').append(k).append('=').append(quoted(v)));
    return text.append('\n').toString();
  }

  private static String quoted(Object v) {
    String s = String.valueOf(v).replace('\n', ' ');
    boolean plain = !s.isEmpty() && !s.contains(" ") && !s.contains("\"");
    return plain ? s : '"' + s.replace("\"", "\\\"") + '"';
  }

  private static String levelName(Level level) {
    if (level.intValue() >= Level.SEVERE.intValue()) {
      return "ERROR";
    }
    if (level.intValue() >= Level.WARNING.intValue()) {
      return "WARN";
    }
    return level.intValue() >= Level.INFO.intValue() ? "INFO" : "DEBUG";
  }

  /** Library records in the agent's line format. */
  private static final class LibraryFormat extends Formatter {
    @Override
    public String format(LogRecord record) {
      String message = formatMessage(record);
      if (record.getThrown() != null) {
        message = message + ": " + record.getThrown();
      }
      return line(
          Instant.ofEpochMilli(record.getMillis()),
          record.getLevel(),
          record.getLoggerName(),
          message,
          Map.of());
    }
  }
}
