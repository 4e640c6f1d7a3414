#include "dataplane/engine_files.h"

#include <sys/stat.h>

#include <cerrno>

#include "base/strings.h"

namespace archil {
namespace {

class SnapshotFile final : public FileReader {
 public:
  SnapshotFile(std::shared_ptr<engine::DiskFs> view, posix::Ino ino, uint64_t size)
      : view_(std::move(view)), ino_(ino), size_(size) {}

  uint64_t size() const override { return size_; }

  Result<std::string> ReadAt(uint64_t offset, size_t length) override {
    return view_->Read(ino_, offset, length);
  }

 private:
  std::shared_ptr<engine::DiskFs> view_;
  const posix::Ino ino_;
  const uint64_t size_;
};

Status NoFile(const DiskId& disk, std::string_view path, std::string_view why) {
  return Status::NotFound("disk '" + disk.str() + "' has no file '" + std::string(path) + "'" +
                          (why.empty() ? "" : ": ") + std::string(why));
}

}  // namespace

Result<std::unique_ptr<FileReader>> EngineFiles::OpenFile(const DiskId& disk,
                                                          std::string_view path) {
  ARCHIL_ASSIGN_OR_RETURN(engine::DiskNo no, engine::DiskNoFromId(disk));
  Result<std::shared_ptr<engine::DiskFs>> view = engine_->OpenSnapshot(no);
  if (!view.ok()) {
    if (view.status().code() == Status::Code::kNotFound) {
      return Status::NotFound("no disk with id '" + disk.str() + "'");
    }
    return view.status();
  }
  posix::Attr attr;
  attr.ino = posix::kRootIno;
  attr.mode = S_IFDIR;
  for (std::string_view name : Split(path, '/')) {
    if (name.empty() || name == "." || name == "..") {
      return Status::InvalidArgument("a file's path may not hold an empty part, '.' or '..'");
    }
    if (!S_ISDIR(attr.mode)) return NoFile(disk, path, "a part of its path is not a directory");
    Result<posix::Attr> next = (*view)->Lookup(attr.ino, name);
    if (!next.ok()) {
      const int err = next.status().sys_errno();
      if (err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG ||
          next.status().code() == Status::Code::kNotFound) {
        return NoFile(disk, path, "");
      }
      return next.status();
    }
    attr = *next;
  }
  if (!S_ISREG(attr.mode)) return NoFile(disk, path, "it is not a regular file");
  return std::unique_ptr<FileReader>(std::make_unique<SnapshotFile>(*view, attr.ino, attr.size));
}

}  // namespace archil
