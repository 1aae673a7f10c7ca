package io.etcdmemberagent.app.join;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * The environment file the etcd container sources ({@code set -a; . FILE; exec etcd}): one {@code
 * KEY='value'} line each, written to a temp file beside it and renamed into place, so a reader
 * never sees half a file.
 */
final class EnvFile {

  private EnvFile() {}

  static void write(Path file, Map<String, String> values) throws IOException {
    StringBuilder text = new StringBuilder("# written by etcd-member-agent join\n");
    values.forEach(
        (k, v) -> text.append(k).append("='").append(v.replace("'", "'\\''")).append("'\n"));
    writeText(file, text.toString());
  }

  /** Any text, atomically: a temp file beside the target, then a rename. */
  static void writeText(Path file, String text) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    Path temp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
    try {
      Files.writeString(temp, text, StandardCharsets.UTF_8);
      Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(temp);
    }
  }
}
