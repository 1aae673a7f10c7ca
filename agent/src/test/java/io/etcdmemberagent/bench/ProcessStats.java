package io.etcdmemberagent.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Resident memory, threads and CPU time of a process, from /proc (Linux). */
final class ProcessStats {

  /** Clock ticks per second of /proc/PID/stat times; 100 on Linux for x86_64 and arm64. */
  private static final double TICKS_PER_SECOND = 100;

  private ProcessStats() {}

  static double rssMiB(long pid) {
    return field(pid, "VmRSS:") / 1024.0;
  }

  static double threads(long pid) {
    return field(pid, "Threads:");
  }

  /** User plus system CPU time so far, in milliseconds. */
  static double cpuMillis(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
      return ticks * 1000 / TICKS_PER_SECOND;
    } catch (IOException e) {
      return Double.NaN;
    }
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
