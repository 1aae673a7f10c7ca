package io.etcdmemberagent.disk;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Free and total inodes of a filesystem through statvfs(3), which java.nio does not expose. Only on
 * 64-bit Linux, where {@code struct statvfs} is eleven 8-byte fields ({@code f_files} the 6th,
 * {@code f_favail} the 8th); elsewhere, or when JNA cannot load its native part (e.g. no writable
 * temp dir), inodes are reported as unknown.
 */
final class FilesystemInodes {

  /** Free (for unprivileged users) and total inodes. */
  record Inodes(long free, long total) {}

  private interface LibC extends Library {
    int statvfs(String path, Memory buffer);
  }

  private static final int STATVFS_BYTES = 11 * 8 + 6 * 4;
  private static final Optional<LibC> LIBC = load();

  private FilesystemInodes() {}

  private static Optional<LibC> load() {
    if (!Platform.isLinux() || Native.LONG_SIZE != 8) {
      return Optional.empty();
    }
    try {
      return Optional.of(Native.load("c", LibC.class));
    } catch (LinkageError | RuntimeException e) {
      return Optional.empty();
    }
  }

  static Optional<Inodes> of(Path path) {
    if (LIBC.isEmpty()) {
      return Optional.empty();
    }
    try (Memory buffer = new Memory(STATVFS_BYTES)) {
      if (LIBC.get().statvfs(path.toString(), buffer) != 0) {
        return Optional.empty();
      }
      long total = buffer.getLong(5 * 8);
      long available = buffer.getLong(7 * 8);
      return total > 0 ? Optional.of(new Inodes(available, total)) : Optional.empty();
    } catch (LinkageError | RuntimeException e) {
      return Optional.empty();
    }
  }
}
