package io.etcdmemberagent.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** Resident memory, threads and CPU time of a process, from /proc (Linux). */
final class ProcessStats {

  /** Clock ticks per second of /proc/PID/stat times; 100 on Linux for x86_64 and arm64. */
  private static final double TICKS_PER_SECOND = 100;

  private ProcessStats() {}

  static double rssMiB(long pid) {
    return field(pid, "VmRSS:") / 1024.0;
  }

  /** The part of the RSS that no file backs: heap, metaspace, stacks, relocated archives. */
  static double anonymousMiB(long pid) {
    return field(pid, "RssAnon:") / 1024.0;
  }

  static double threads(long pid) {
    return field(pid, "Threads:");
  }

  /** User plus system CPU time so far, in milliseconds. */
  static double cpuMillis(long pid) {
    try {
      return cpuMillisOf(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
    } catch (IOException e) {
      return Double.NaN;
    }
  }

  /**
   * CPU time so far by thread name (user plus system, milliseconds), threads whose names differ
   * only in a number at the end summed ({@code http-23} and {@code http-24} are {@code http-N}).
   */
  static Map<String, Double> cpuMillisByThread(long pid) {
    Map<String, Double> byName = new TreeMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : tasks.toList()) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          byName.merge(name.replaceAll("(?<=-)\\d+|\\d+$", "N"), cpuMillisOf(stat), Double::sum);
        } catch (IOException ended) {
          // the thread ended between the listing and the read
        }
      }
    } catch (IOException e) {
      // gone
    }
    return byName;
  }

  /** utime + stime of a /proc stat line (process or thread), in milliseconds. */
  private static double cpuMillisOf(String stat) {
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 1000 / TICKS_PER_SECOND;
  }

  private static long field(long pid, String name) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith(name)) {
          return Long.parseLong(line.substring(name.length()).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException e) {
      // gone
    }
    return -1;
  }
}
