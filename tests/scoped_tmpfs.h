// ScopedTmpfs: a small tmpfs for a test's life (a server data directory that fills up).
#pragma once

#include <sys/mount.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <utility>

namespace archil::testing {

// A tmpfs of `size` (mount(8)'s form, "400m") at `path` for the life of the object: a server
// data directory that fills up. ok() says whether the mount worked; errno_ why not.
class ScopedTmpfs {
 public:
  ScopedTmpfs(std::string path, const std::string& size) : path_(std::move(path)) {
    std::filesystem::create_directories(path_);
    ok_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    errno_ = ok_ ? 0 : errno;
  }
  ~ScopedTmpfs() {
    if (ok_) umount2(path_.c_str(), MNT_DETACH);
  }
  ScopedTmpfs(const ScopedTmpfs&) = delete;
  ScopedTmpfs& operator=(const ScopedTmpfs&) = delete;
  bool ok() const { return ok_; }
  int error() const { return errno_; }

 private:
  std::string path_;
  bool ok_ = false;
  int errno_ = 0;
};

}  // namespace archil::testing
