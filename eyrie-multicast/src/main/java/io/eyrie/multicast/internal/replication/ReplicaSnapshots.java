package io.eyrie.multicast.internal.replication;

import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.eyrie.multicast.GroupId;
import io.eyrie.multicast.internal.state.GroupState;
import io.eyrie.multicast.internal.state.GroupStateSnapshot;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.function.Supplier;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.AtomicFileOutputStream;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A replica's snapshot files in Ratis's storage: one file per snapshot holding the whole
 * {@link GroupStateSnapshot}, written atomically with its MD5 beside it, checked against it when
 * read. The {@link GroupStateMachine} decides when, and swaps the state under its lock.
 */
final class ReplicaSnapshots {
  private static final Logger LOG = LoggerFactory.getLogger(GroupStateMachine.class);

  private ReplicaSnapshots() {}

  /**
   * Reads a snapshot into a state made for it, or returns null if the file is missing.
   *
   * @param group the replica's group, for the log
   * @param snapshot the snapshot Ratis's storage names
   * @param fresh makes the empty state to read into, once the file is there and checked
   * @return the state read, or null
   * @throws IOException if the file does not match its MD5 or cannot be read
   */
  static GroupState read(GroupId group, SingleFileSnapshotInfo snapshot, Supplier<GroupState> fresh)
      throws IOException {
    File file = snapshot.getFile().getPath().toFile();
    if (!file.exists()) {
      LOG.warn("{}: snapshot file {} is missing", group, file);
      return null;
    }
    MD5Hash expected = snapshot.getFile().getFileDigest();
    if (expected != null) {
      MD5FileUtil.verifySavedMD5(file, expected);
    }
    GroupState s = fresh.get();
    try (InputStream is = new BufferedInputStream(Files.newInputStream(file.toPath())); Input in = new Input(is)) {
      GroupStateSnapshot.read(s, in);
    } catch (RuntimeException e) {
      throw new IOException("cannot read snapshot " + file + ": " + e, e);
    }
    return s;
  }

  /**
   * Writes a state as the snapshot at a term and index and makes it the storage's latest; the
   * caller holds the state's lock.
   *
   * @return the snapshot's size in bytes
   */
  static int write(SimpleStateMachineStorage storage, TermIndex at, GroupState state) throws IOException {
    byte[] bytes;
    try (Output out = new Output(1 << 16, -1)) {
      GroupStateSnapshot.write(state, out);
      bytes = out.toBytes();
    }
    File file = storage.getSnapshotFile(at.getTerm(), at.getIndex());
    try (BufferedOutputStream out = new BufferedOutputStream(new AtomicFileOutputStream(file), 1 << 16)) {
      out.write(bytes);
    }
    MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
    storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), at));
    return bytes.length;
  }
}
