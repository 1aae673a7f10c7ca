package io.etcdmemberagent.disk;

import io.etcdmemberagent.core.join.DataDirMember;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;

/**
 * The member and cluster ids an etcd data dir belongs to, read the way etcd's WAL decoder reads
 * them: every {@code member/wal/*.wal} file starts with a CRC record and then the metadata record
 * ({@code etcdserverpb.Metadata}: NodeID = field 1, ClusterID = field 2). Each record is a
 * little-endian 64-bit frame length (the top byte flags padding) and a {@code walpb.Record} (type =
 * field 1, data = field 3; metadata is type 1). Reads the first kilobytes of one file, never
 * writes.
 */
public final class WalIdentity {

  private static final int METADATA_TYPE = 1;
  private static final int READ_BYTES = 4096;

  private WalIdentity() {}

  public static DataDirMember read(Path dataDir) {
    return read(dataDir, java.util.Optional.empty());
  }

  /**
   * The member of {@code dataDir}, whose WAL is in {@code walDir} when etcd runs with {@code
   * --wal-dir} (else in {@code member/wal}). Empty only when neither holds anything of a member.
   */
  public static DataDirMember read(Path dataDir, java.util.Optional<Path> separateWal) {
    Path member = dataDir.resolve("member");
    if (!Files.isDirectory(member) && separateWal.map(w -> !hasWal(w)).orElse(true)) {
      return new DataDirMember.Empty();
    }
    Path walDir = separateWal.orElse(member.resolve("wal"));
    try (Stream<Path> files = Files.list(walDir)) {
      List<Path> wals =
          files.filter(p -> p.getFileName().toString().endsWith(".wal")).sorted().toList();
      if (wals.isEmpty()) {
        return new DataDirMember.Unreadable("no WAL file in " + walDir);
      }
      return identify(wals.get(wals.size() - 1));
    } catch (IOException | RuntimeException e) {
      return new DataDirMember.Unreadable(walDir + ": " + e);
    }
  }

  private static boolean hasWal(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      return files.anyMatch(p -> p.getFileName().toString().endsWith(".wal"));
    } catch (IOException e) {
      return false;
    }
  }

  static DataDirMember identify(Path wal) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(READ_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    try (FileChannel file = FileChannel.open(wal, StandardOpenOption.READ)) {
      while (buf.hasRemaining() && file.read(buf) > 0) {
        // read the head of the file
      }
    }
    buf.flip();
    for (int record = 0; record < 3 && buf.remaining() >= 8; record++) {
      long frame = buf.getLong();
      int length = (int) (frame & 0x00FF_FFFF_FFFF_FFFFL);
      int pad = (frame & 0x8000_0000_0000_0000L) != 0 ? (int) ((frame >>> 56) & 0x7) : 0;
      if (length <= 0 || length + pad > buf.remaining()) {
        break;
      }
      ByteBuffer body = buf.slice(buf.position(), length);
      buf.position(buf.position() + length + pad);
      long[] typeAndData = recordTypeAndData(body);
      if (typeAndData[0] == METADATA_TYPE && typeAndData[1] >= 0) {
        ByteBuffer data = body.slice((int) typeAndData[1], (int) typeAndData[2]);
        long memberId = 0;
        long clusterId = 0;
        while (data.hasRemaining()) {
          int tag = (int) varint(data);
          long value = (tag & 7) == 0 ? varint(data) : -1;
          if (tag == (1 << 3)) {
            memberId = value;
          } else if (tag == (2 << 3)) {
            clusterId = value;
          } else if ((tag & 7) != 0) {
            break;
          }
        }
        if (memberId != 0) {
          return new DataDirMember.Identified(memberId, clusterId);
        }
        break;
      }
    }
    return new DataDirMember.Unreadable("no metadata record at the start of " + wal);
  }

  /** The record's type, and the offset and length of its data (-1 when absent). */
  private static long[] recordTypeAndData(ByteBuffer record) {
    long type = -1;
    long offset = -1;
    long length = 0;
    while (record.hasRemaining()) {
      int tag = (int) varint(record);
      switch (tag & 7) {
        case 0 -> {
          long v = varint(record);
          if (tag >>> 3 == 1) {
            type = v;
          }
        }
        case 2 -> {
          int n = (int) varint(record);
          if (tag >>> 3 == 3) {
            offset = record.position();
            length = n;
          }
          record.position(record.position() + n);
        }
        case 5 -> record.position(record.position() + 4);
        case 1 -> record.position(record.position() + 8);
        default -> {
          return new long[] {type, -1, 0};
        }
      }
    }
    return new long[] {type, offset, length};
  }

  private static long varint(ByteBuffer b) {
    long value = 0;
    for (int shift = 0; shift < 64 && b.hasRemaining(); shift += 7) {
      byte x = b.get();
      value |= (long) (x & 0x7F) << shift;
      if ((x & 0x80) == 0) {
        return value;
      }
    }
    return value;
  }
}
