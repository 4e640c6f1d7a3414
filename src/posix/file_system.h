// FileSystem: the operations on one disk's tree, as the storage engine implements them for the
// disk server and as the reference model (model_fs.h) implements them for tests.
//
// Semantics are ext4's for what reaches a file system through FUSE with default_permissions: the
// kernel has already checked permissions and resolved paths, so these calls check none, and take
// inode numbers and single names. Every error carries the errno ext4 would return (ErrnoFor()):
//   ENOENT   no such entry (or inode)          ENOTDIR  not a directory where one is needed
//   EEXIST   the name exists                   EISDIR   a directory where one must not be
//   ENOTEMPTY  rmdir/rename over a non-empty directory
//   EINVAL   bad name, rename of a directory into its own subtree, readlink of a non-symlink,
//            bad flags
//   EPERM    link to a directory                EFBIG    beyond kMaxFileSize
//   ENODATA  no such xattr                      E2BIG    xattr value over kXattrValueMax
//   ENOSPC   out of space (after which deletes still work)
// Timestamps follow ext4: a change to an inode sets its ctime, a change to a file's data or a
// directory's entries sets mtime and ctime; atime is never updated by reads (noatime).
//
// Durability: when a mutating call returns OK, its effect survives a crash of the process and a
// power loss (implementations document how).
//
// Thread-safety: implementations are safe for concurrent use; each call is atomic.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "posix/types.h"

namespace archil::posix {

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  virtual Result<Attr> Lookup(Ino parent, std::string_view name) = 0;
  // Lookup of `name` in `parent`, which its caller knows names `ino` (it saw so, and on a mount
  // that owns its disk no name changes but through it): a file system that knows `ino`'s
  // attributes may answer with them without asking the disk. The default is Lookup.
  virtual Result<Attr> LookupSeen(Ino parent, std::string_view name, Ino ino) {
    (void)ino;
    return Lookup(parent, name);
  }
  virtual Result<Attr> GetAttr(Ino ino) = 0;
  // EISDIR for a size change of a directory, EINVAL for other non-regular files; EINVAL for mode
  // bits beyond 07777.
  virtual Result<Attr> SetAttr(Ino ino, const SetAttrRequest& request) = 0;

  // Regular files, FIFOs, sockets and device nodes: `mode` carries the type (S_IFREG, S_IFIFO,
  // S_IFSOCK, S_IFCHR, S_IFBLK) and the permission bits; `rdev` for devices.
  virtual Result<Attr> Mknod(Ino parent, std::string_view name, uint32_t mode, uint32_t rdev,
                             Owner owner) = 0;
  // Mknod of a name its caller knows is absent from `parent` (a directory whose names it knows):
  // a file system may answer it before the disk has it, durable at the next Sync. The default is
  // Mknod.
  virtual Result<Attr> MknodNew(Ino parent, std::string_view name, uint32_t mode, uint32_t rdev,
                                Owner owner) {
    return Mknod(parent, name, mode, rdev, owner);
  }
  // `mode`: permission bits.
  virtual Result<Attr> Mkdir(Ino parent, std::string_view name, uint32_t mode, Owner owner) = 0;
  // Mkdir of a name its caller knows is absent from `parent`, as MknodNew. The default is Mkdir.
  virtual Result<Attr> MkdirNew(Ino parent, std::string_view name, uint32_t mode, Owner owner) {
    return Mkdir(parent, name, mode, owner);
  }
  // ENAMETOOLONG for a target over kSymlinkMax, ENOENT for an empty one.
  virtual Result<Attr> Symlink(Ino parent, std::string_view name, std::string_view target,
                               Owner owner) = 0;
  // A new name for `ino`; EPERM for a directory.
  virtual Result<Attr> Link(Ino ino, Ino new_parent, std::string_view new_name) = 0;
  // EISDIR for a directory. An inode whose last name goes while it has holders stays readable and
  // writable through its number until the last Release (also across a restart).
  virtual Status Unlink(Ino parent, std::string_view name) = 0;
  // Unlink of `name`, which its caller knows is the only name of `ino`, a non-directory it does
  // not have open (so the inode goes with it): a file system may answer it before the disk has
  // it, durable at the next Sync. The default is Unlink.
  virtual Status UnlinkLast(Ino parent, std::string_view name, Ino ino) {
    (void)ino;
    return Unlink(parent, name);
  }
  virtual Status Rmdir(Ino parent, std::string_view name) = 0;
  // Rmdir of `name`, which its caller knows is the directory `ino`, empty and not open: a file
  // system may answer it before the disk has it, durable at the next Sync. The default is Rmdir.
  virtual Status RmdirEmpty(Ino parent, std::string_view name, Ino ino) {
    (void)ino;
    return Rmdir(parent, name);
  }
  // Atomic. `flags`: 0, kRenameNoReplace or kRenameExchange.
  virtual Status Rename(Ino parent, std::string_view name, Ino new_parent,
                        std::string_view new_name, uint32_t flags) = 0;
  virtual Result<std::string> Readlink(Ino ino) = 0;

  // Up to `max_entries` entries after the one whose cookie is `after_cookie` (0: from the start),
  // without "." and "..". A cookie stays valid while the directory changes: no entry is returned
  // twice or skipped unless it was added or removed meanwhile.
  virtual Result<DirPage> ReadDir(Ino dir, uint64_t after_cookie, size_t max_entries) = 0;
  // ReadDir, with each entry's attributes (DirEntry::attr; left empty for an entry whose
  // attributes could not be read, e.g. one removed meanwhile). This default asks GetAttr of each.
  virtual Result<DirPage> ReadDirPlus(Ino dir, uint64_t after_cookie, size_t max_entries) {
    Result<DirPage> page = ReadDir(dir, after_cookie, max_entries);
    if (!page.ok()) return page;
    for (DirEntry& e : page->entries) {
      Result<Attr> a = GetAttr(e.ino);
      if (a.ok()) e.attr = *a;
    }
    return page;
  }

  virtual Result<std::string> GetXattr(Ino ino, std::string_view name) = 0;
  // `flags`: 0, kXattrCreate (EEXIST if present) or kXattrReplace (ENODATA if absent).
  virtual Status SetXattr(Ino ino, std::string_view name, std::string_view value,
                          uint32_t flags) = 0;
  virtual Result<std::vector<std::string>> ListXattr(Ino ino) = 0;
  virtual Status RemoveXattr(Ino ino, std::string_view name) = 0;

  // Up to `length` bytes at `offset`; short only at end of file; holes read as zeros.
  virtual Result<std::string> Read(Ino ino, uint64_t offset, size_t length) = 0;
  // Writes all of `data` at `offset`, extending the size if needed; returns the new attributes.
  virtual Result<Attr> Write(Ino ino, uint64_t offset, std::string_view data) = 0;
  // `mode`: 0 (allocate: extend the size unless kFallocKeepSize), kFallocKeepSize,
  // kFallocPunchHole | kFallocKeepSize, kFallocZeroRange [| kFallocKeepSize]; EOPNOTSUPP for
  // other combinations.
  virtual Status Fallocate(Ino ino, uint32_t mode, uint64_t offset, uint64_t length) = 0;
  virtual Result<StatFs> Statfs() = 0;

  // Open-file references that keep an unlinked inode alive.
  virtual Status Open(Ino ino, HolderId holder) = 0;
  // Drops one reference of `holder`; the inode goes when it has no name and no holder.
  virtual Status Release(Ino ino, HolderId holder) = 0;
  // Drops every reference of `holder` (its session ended, or did not come back after a restart).
  virtual Status DropHolder(HolderId holder) = 0;

  // Makes every operation answered so far durable (fsync, syncfs). The default does nothing: an
  // implementation whose every answer is durable has nothing to do.
  virtual Status Sync() { return Status::Ok(); }
  // A write its caller did not ask to be durable (no O_SYNC or O_DSYNC: the kernel's write-back):
  // it may be answered before it is durable, and is durable after the next Sync. The default is
  // Write.
  virtual Result<Attr> WriteBehind(Ino ino, uint64_t offset, std::string_view data) {
    return Write(ino, offset, data);
  }
};

}  // namespace archil::posix
