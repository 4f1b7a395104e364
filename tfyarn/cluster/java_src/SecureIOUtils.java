/*
 * tfyarn's stand-in for Hadoop's org.apache.hadoop.io.SecureIOUtils, on the
 * NodeManagers of the local Kerberized cluster only (`tfyarn cluster up --kerberos`).
 *
 * Why: in secure mode a NodeManager opens container log files (to serve them
 * and to aggregate them) only through SecureIOUtils, whose class initializer
 * refuses to load without libhadoop ("Secure IO is not possible without native
 * code extensions") and whose owner check expects files the
 * LinuxContainerExecutor wrote as the job's user. Neither native part is on
 * Maven Central, so the local cluster runs containers with the
 * DefaultContainerExecutor, as the NodeManager's own OS user.
 *
 * What it does: the same public methods, in pure Java (NIO's POSIX
 * attributes instead of libhadoop's fstat). A file is opened only if the
 * expected owner, or the NodeManager's own user (the DefaultContainerExecutor
 * runs containers as that user), owns it; anything else is refused as
 * Hadoop's would refuse it. Who may read which application's logs is decided
 * before this, by the NodeManager's ACL check, which is unchanged.
 * A real secure cluster has libhadoop and never loads this class.
 */
package org.apache.hadoop.io;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

public class SecureIOUtils {
  private static final String SELF = System.getProperty("user.name");

  public static RandomAccessFile openForRandomRead(File f, String mode, String expectedOwner,
      String expectedGroup) throws IOException {
    return forceSecureOpenForRandomRead(f, mode, expectedOwner, expectedGroup);
  }

  protected static RandomAccessFile forceSecureOpenForRandomRead(File f, String mode,
      String expectedOwner, String expectedGroup) throws IOException {
    checkOwner(f, expectedOwner);
    return new RandomAccessFile(f, mode);
  }

  public static FSDataInputStream openFSDataInputStream(File file, String expectedOwner,
      String expectedGroup) throws IOException {
    return forceSecureOpenFSDataInputStream(file, expectedOwner, expectedGroup);
  }

  protected static FSDataInputStream forceSecureOpenFSDataInputStream(File file,
      String expectedOwner, String expectedGroup) throws IOException {
    checkOwner(file, expectedOwner);
    return FileSystem.getLocal(new Configuration()).getRaw().open(new Path(file.getAbsolutePath()));
  }

  public static FileInputStream openForRead(File f, String expectedOwner, String expectedGroup)
      throws IOException {
    return forceSecureOpenForRead(f, expectedOwner, expectedGroup);
  }

  protected static FileInputStream forceSecureOpenForRead(File f, String expectedOwner,
      String expectedGroup) throws IOException {
    checkOwner(f, expectedOwner);
    return new FileInputStream(f);
  }

  /** A new file only (never one that exists, which could be a planted link), with ``permissions``. */
  public static FileOutputStream createForWrite(File f, int permissions) throws IOException {
    Set<PosixFilePermission> perms = EnumSet.noneOf(PosixFilePermission.class);
    PosixFilePermission[] order = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE
    for (int i = 0; i < 9; i++) {
      if ((permissions & (1 << (8 - i))) != 0) {
        perms.add(order[i]);
      }
    }
    try {
      Files.createFile(f.toPath(), PosixFilePermissions.asFileAttribute(perms));
    } catch (FileAlreadyExistsException e) {
      throw new AlreadyExistsException(e);
    }
    return new FileOutputStream(f);
  }

  private static void checkOwner(File f, String expectedOwner) throws IOException {
    if (expectedOwner == null) {
      return;
    }
    String owner = Files.getOwner(f.toPath()).getName();
    if (!owner.equals(expectedOwner) && !owner.equals(SELF)) {
      throw new IOException("Owner '" + owner + "' for path " + f + " did not match expected owner '"
          + expectedOwner + "'");
    }
  }

  /** Thrown by createForWrite when the file exists. */
  public static class AlreadyExistsException extends IOException {
    private static final long serialVersionUID = 1L;

    public AlreadyExistsException(String msg) {
      super(msg);
    }

    public AlreadyExistsException(Throwable cause) {
      super(cause);
    }
  }
}
