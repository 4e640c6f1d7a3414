// ModelFs: the reference model of FileSystem: a plain in-memory tree with ext4's semantics and
// nothing else (no durability, no caching, no concurrency cleverness: one mutex).
//
// Crash and differential tests run the same operations on it and on the engine and compare every
// result; its code is written to be obviously right rather than fast. Copyable, so a crash test
// can keep the model as of every acknowledged operation.
//
// Thread-safety: safe for concurrent use (one mutex per model).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "posix/file_system.h"

namespace archil::posix {

class ModelFs : public FileSystem {
 public:
  // A disk whose root directory has `root_mode` (permission bits) and `root_owner`.
  explicit ModelFs(const Clock* clock, uint32_t root_mode = 0755, Owner root_owner = {});
  ModelFs(const ModelFs& other);
  ModelFs& operator=(const ModelFs&) = delete;
  ~ModelFs() override;

  Result<Attr> Lookup(Ino parent, std::string_view name) override;
  Result<Attr> GetAttr(Ino ino) override;
  Result<Attr> SetAttr(Ino ino, const SetAttrRequest& request) override;
  Result<Attr> Mknod(Ino parent, std::string_view name, uint32_t mode, uint32_t rdev,
                     Owner owner) override;
  Result<Attr> Mkdir(Ino parent, std::string_view name, uint32_t mode, Owner owner) override;
  Result<Attr> Symlink(Ino parent, std::string_view name, std::string_view target,
                       Owner owner) override;
  Result<Attr> Link(Ino ino, Ino new_parent, std::string_view new_name) override;
  Status Unlink(Ino parent, std::string_view name) override;
  Status Rmdir(Ino parent, std::string_view name) override;
  Status Rename(Ino parent, std::string_view name, Ino new_parent, std::string_view new_name,
                uint32_t flags) override;
  Result<std::string> Readlink(Ino ino) override;
  Result<DirPage> ReadDir(Ino dir, uint64_t after_cookie, size_t max_entries) override;
  Result<std::string> GetXattr(Ino ino, std::string_view name) override;
  Status SetXattr(Ino ino, std::string_view name, std::string_view value, uint32_t flags) override;
  Result<std::vector<std::string>> ListXattr(Ino ino) override;
  Status RemoveXattr(Ino ino, std::string_view name) override;
  Result<std::string> Read(Ino ino, uint64_t offset, size_t length) override;
  Result<Attr> Write(Ino ino, uint64_t offset, std::string_view data) override;
  Status Fallocate(Ino ino, uint32_t mode, uint64_t offset, uint64_t length) override;
  Result<StatFs> Statfs() override;
  Status Open(Ino ino, HolderId holder) override;
  Status Release(Ino ino, HolderId holder) override;
  Status DropHolder(HolderId holder) override;

  // Inodes that exist (reachable or held open), for invariant checks.
  size_t InodeCount();

 private:
  friend class ModelOps;  // model_fs.cc: the helpers every operation shares
  struct Node;
  struct State;

  std::unique_ptr<State> state_ ARCHIL_GUARDED_BY(mu_);
  const Clock* const clock_;
  mutable Mutex mu_;
};

}  // namespace archil::posix
