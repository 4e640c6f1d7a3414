// DirStore: an ObjectStore in a local directory, dir://PATH (the embedded default,
// DATA_DIR/objects). An object is the file PATH/<key>; its '/'-separated components are
// directories.
//
// Durability: every write is a temporary file in PATH/.archil-tmp, fsynced, then named by
// link(2) (kIfAbsent, which fails with EEXIST if the name exists) or rename(2) (kNone,
// kIfMatch), then the directory that holds the name is fsynced, and so is every directory
// created for it. A crash leaves the old object or the new one, never a torn one; temporary files
// are removed at the next Open.
//
// PutFile links the given file itself when it is on the same file system (the object then
// shares the segment file's inode: such a segment must never be hole-punched; docs/tiering.md
// §1), and copies it (copy_file_range) when it is not (EXDEV).
//
// ETags are "<inode>-<size>-<mtime ns>" of the object file: every Put names a new inode, so an
// ETag changes whenever the object is replaced. Replacements (kNone, kIfMatch) and removals take
// a mutex (this process's threads) and an exclusive flock(2) of PATH/.archil-tmp/lock (other
// processes), and kIfMatch compares and renames under both: of racing compare-and-swaps exactly
// one wins, and none lands on top of a replacement or removal it did not see.
//
// The key component ".archil-tmp" is refused at the top level (kInvalidArgument).
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <memory>
#include <string>

#include "base/mutex.h"
#include "store/object_store.h"

namespace archil::store {

class DirStore final : public ObjectStore {
 public:
  // Creates PATH (and its parents) if it does not exist, and empties PATH/.archil-tmp.
  static Result<std::unique_ptr<DirStore>> Open(const std::string& path);
  ~DirStore() override;

  Result<std::string> Put(std::string_view key, std::string_view data,
                          const PutOptions& options) override;
  Result<FileUpload> PutFile(std::string_view key, const std::string& path, uint64_t size) override;
  Result<std::string> Get(std::string_view key, uint64_t offset = 0,
                          uint64_t length = kToEnd) override;
  Result<ObjectInfo> Head(std::string_view key) override;
  Result<ListPage> List(std::string_view prefix, std::string_view start_after,
                        size_t limit) override;
  Status Delete(std::string_view key) override;
  bool HoldsFile(std::string_view key, const std::string& path) override;
  bool EnforcesConditions() const override { return true; }
  std::string Describe() const override { return "dir://" + root_; }

 private:
  DirStore(std::string root, int lock_fd) : root_(std::move(root)), lock_fd_(lock_fd) {}
  Status CheckKey(std::string_view key) const;
  // Creates the directories of `key`'s parent, fsyncing each new one's parent.
  Status MakeParents(std::string_view key);
  // Writes `data` (or the file `src`) to a new fsynced temporary file; returns its path.
  Result<std::string> WriteTemp(std::string_view data);
  Result<std::string> CopyTemp(const std::string& src, uint64_t size);
  Status SyncParent(std::string_view key);

  const std::string root_;
  const int lock_fd_;
  // Serializes replacements and removals among this process's threads (see NameLock).
  Mutex names_mu_;
};

}  // namespace archil::store
