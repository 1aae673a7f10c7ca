package io.etcdmemberagent.disk;

import io.etcdmemberagent.core.disk.DbFileState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads the two meta pages of a bbolt file the way bbolt's Open validates them: page flag meta,
 * magic {@code 0xED0CDAED}, version 2, and the FNV-1a 64 checksum of the meta fields. bbolt opens a
 * file when either page is valid; when neither is, etcd cannot start on it. Reads at most two small
 * chunks, never writes, and takes no lock (etcd holds bbolt's flock while it runs).
 */
final class BoltMetaPages {

  private static final int HEADER = 16;
  private static final int META_FLAG = 0x04;
  private static final int MAGIC = 0xED0CDAED;
  private static final int VERSION = 2;
  private static final int CHECKSUM_AT = HEADER + 56;
  private static final int META_BYTES = CHECKSUM_AT + 8;
  private static final int[] SECOND_PAGE_GUESSES = {4096, 8192, 16384, 65536};

  private BoltMetaPages() {}

  /** Throws only when the calling thread was interrupted (the agent is stopping). */
  static DbFileState read(Path db) throws ClosedByInterruptException {
    try (FileChannel file = FileChannel.open(db, StandardOpenOption.READ)) {
      List<String> problems = new ArrayList<>();
      ByteBuffer first = chunk(file, 0);
      Optional<String> firstProblem = problem(first);
      if (firstProblem.isEmpty()) {
        return new DbFileState.Valid();
      }
      problems.add("meta page 0: " + firstProblem.get());
      for (int pageSize : SECOND_PAGE_GUESSES) {
        if (pageSize + META_BYTES > file.size()) {
          break;
        }
        Optional<String> second = problem(chunk(file, pageSize));
        if (second.isEmpty()) {
          return new DbFileState.Valid();
        }
        if (pageSize == SECOND_PAGE_GUESSES[0]) {
          problems.add("meta page 1: " + second.get());
        }
      }
      return new DbFileState.Corrupt(String.join("; ", problems));
    } catch (NoSuchFileException e) {
      return new DbFileState.Missing();
    } catch (ClosedByInterruptException e) {
      throw e;
    } catch (IOException e) {
      return new DbFileState.Unreadable(e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  private static ByteBuffer chunk(FileChannel file, long at) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(META_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    while (buffer.hasRemaining()) {
      if (file.read(buffer, at + buffer.position()) < 0) {
        break;
      }
    }
    buffer.flip();
    return buffer;
  }

  private static Optional<String> problem(ByteBuffer page) {
    if (page.limit() < META_BYTES) {
      return Optional.of("file too short");
    }
    if ((page.getShort(8) & META_FLAG) == 0) {
      return Optional.of("not a meta page");
    }
    if (page.getInt(HEADER) != MAGIC) {
      return Optional.of("invalid magic");
    }
    if (page.getInt(HEADER + 4) != VERSION) {
      return Optional.of("unknown version " + page.getInt(HEADER + 4));
    }
    if (fnv1a64(page, HEADER, CHECKSUM_AT) != page.getLong(CHECKSUM_AT)) {
      return Optional.of("checksum mismatch");
    }
    return Optional.empty();
  }

  private static long fnv1a64(ByteBuffer bytes, int from, int to) {
    long hash = 0xcbf29ce484222325L;
    for (int i = from; i < to; i++) {
      hash ^= bytes.get(i) & 0xff;
      hash *= 0x100000001b3L;
    }
    return hash;
  }
}
