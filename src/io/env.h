// Env: the seam between the storage engine and the file system it stores data on.
//
// Everything the engine does to files goes through an Env, so that tests can swap the real file
// system (PosixEnv, posix_env.h) for an in-memory one that simulates power loss (SimEnv,
// sim_env.h). The interface is deliberately POSIX-shaped: positional reads and writes, explicit
// data sync, explicit directory sync.
//
// Paths are absolute, '/'-separated; "." and empty components are ignored.
//
// Durability contract (what survives a power loss or kernel crash), as ext4 with data=ordered
// gives it to an application; code above this seam may rely on nothing more:
//   * File contents: bytes written by Pwrite/Truncate/Allocate/PunchHole are durable only after
//     File::Sync on a handle of that file returns OK. Until then each 512-byte sector of an
//     un-synced write may or may not have reached the disk, and an un-synced growth of the file
//     size may be lost.
//   * Names: a new name (OpenFile with create, CreateDir, Link), a removed name (Unlink,
//     RemoveDir) and a Rename are durable only after SyncDir of the directory holding the name
//     returns OK; for a Rename between two directories, after SyncDir of both. Syncing a file
//     does not make its name durable: a file created, written and synced whose directory was
//     never synced is gone after a power loss.
//   * Rename is atomic: after a power loss the target names either the old or the new file,
//     never neither (if it existed before) and never a mix.
//
// Errors: every failure is a Status built with Status::FromErrno(errno, what), so the errno
// (ENOENT, EEXIST, ENOSPC, ENOTEMPTY, EXDEV, EIO, ...) is preserved for the caller; ErrnoFor()
// (base/status.h) reads it back.
//
// Thread-safety: an Env is safe to use from many threads. A File may be used from several threads
// at once for Pread/Pwrite/Sync/Size (positional I/O needs no shared cursor) but Close must not
// race with any other call on the same File.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace archil::io {

// An open regular file.
class File {
 public:
  virtual ~File() = default;

  // Reads up to `n` bytes at `offset` into `buf`; returns the number read, which is less than `n`
  // only at end of file (0 at or past it). Holes read as zeros.
  virtual Result<size_t> Pread(uint64_t offset, size_t n, char* buf) = 0;
  // Writes all of `data` at `offset`, growing the file if needed (a gap reads as zeros). Either all
  // bytes are written or an error is returned (the file may then hold a prefix of them).
  // REQUIRES: the file was not opened read_only.
  virtual Status Pwrite(uint64_t offset, std::string_view data) = 0;
  // fdatasync(2): makes this file's contents and size durable (not its name; see Env::SyncDir).
  virtual Status Sync() = 0;
  // A hint: starts writing [offset, offset + len) to the device without waiting for it
  // (sync_file_range(SYNC_FILE_RANGE_WRITE)), so that a later Sync has less left to wait for.
  // It makes nothing durable. The default does nothing.
  virtual void StartWriteback(uint64_t offset, uint64_t len) {
    (void)offset;
    (void)len;
  }
  // Current size in bytes.
  virtual Result<uint64_t> Size() = 0;
  // Sets the size to `size`: shortens, or extends with zeros.
  virtual Status Truncate(uint64_t size) = 0;
  // fallocate(2): reserves space for [offset, offset + len); with keep_size the file size does not
  // change. Fails with ENOSPC when the space is not there.
  virtual Status Allocate(uint64_t offset, uint64_t len, bool keep_size) = 0;
  // Deallocates [offset, offset + len) (it then reads as zeros); the size does not change.
  virtual Status PunchHole(uint64_t offset, uint64_t len) = 0;
  // Releases the handle. Further calls fail. Un-synced data stays volatile (closing does not sync).
  // Called by the destructor if not called before (its error is then dropped).
  virtual Status Close() = 0;
};

struct OpenOptions {
  bool create = false;     // create the file if missing (O_CREAT)
  bool exclusive = false;  // with create: fail with EEXIST if it exists (O_EXCL)
  bool truncate = false;   // set the size to 0 on open (O_TRUNC)
  bool read_only = false;  // O_RDONLY instead of O_RDWR
  bool direct = false;     // O_DIRECT: buffers, offsets and sizes must be 4096-aligned
  uint32_t mode = 0644;    // permissions of a created file
};

enum class FileType { kRegular, kDirectory, kOther };

struct FileInfo {
  FileType type = FileType::kOther;
  uint64_t size = 0;
  int64_t mtime_micros = 0;  // last modification, microseconds since the Unix epoch
  uint64_t nlink = 0;        // number of names
};

// A held lock from Env::LockFile. Opaque; give it back to the same Env's UnlockFile.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// The space of the file system holding a path.
struct SpaceInfo {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;  // what this process may still allocate
};

class Env {
 public:
  virtual ~Env() = default;

  // Opens (and with options.create, creates) the regular file at `path`.
  // Errors: ENOENT (missing and !create, or the parent is missing), EEXIST (create+exclusive and it
  // exists), EISDIR, ENOTDIR, ENOSPC, EIO.
  virtual Result<std::unique_ptr<File>> OpenFile(const std::string& path,
                                                 const OpenOptions& options) = 0;

  // mkdir(2). Errors: EEXIST, ENOENT (parent missing).
  virtual Status CreateDir(const std::string& path) = 0;
  // rmdir(2). Errors: ENOENT, ENOTEMPTY, ENOTDIR.
  virtual Status RemoveDir(const std::string& path) = 0;
  // fsync(2) of the directory `path`: makes the creation, removal and renaming of the names it
  // holds durable (not the durability of the files' contents, nor of the directory's own name).
  virtual Status SyncDir(const std::string& path) = 0;

  // rename(2): atomically makes `to` name the file or directory `from` named, replacing a file (or
  // an empty directory) at `to`. Durable after SyncDir of both parents.
  // Errors: ENOENT, EISDIR/ENOTDIR (kind mismatch with `to`), ENOTEMPTY, EXDEV, EINVAL.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // link(2): a second name `to` for the regular file `from`. Errors: ENOENT, EEXIST, EPERM (dir).
  virtual Status Link(const std::string& from, const std::string& to) = 0;
  // unlink(2): removes the name; the file's data lives on while open handles remain.
  // Errors: ENOENT, EISDIR.
  virtual Status Unlink(const std::string& path) = 0;

  // The names in directory `path`, without "." and "..", in no particular order.
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) = 0;
  // stat(2). Errors: ENOENT, ENOTDIR.
  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  // Whether anything exists at `path` (false on ENOENT; other errors are returned).
  virtual Result<bool> FileExists(const std::string& path) = 0;
  // Size of the regular file at `path`.
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;
  // statvfs(2) of the file system holding `path` (free = the blocks available to unprivileged
  // users, the conservative figure). Errors: ENOENT.
  virtual Result<SpaceInfo> Space(const std::string& path) = 0;

  // Takes an exclusive advisory lock on `path` (created if missing), held until UnlockFile or the
  // process ends. Fails with EWOULDBLOCK if anyone (this process included) already holds it; it
  // never waits. Use: one process per data directory.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) = 0;
  // REQUIRES: `lock` came from this Env's LockFile.
  virtual Status UnlockFile(std::unique_ptr<FileLock> lock) = 0;
};

// The directory part of `path` ("/a/b" -> "/a", "/a" -> "/").
std::string ParentDir(std::string_view path);

}  // namespace archil::io
