// DiskFiles: one file of a disk, read by the control plane for a share link (docs/api.md "Share
// links").
//
// The data plane implements it over the engine (dataplane/engine_files.h): a file is opened in a
// snapshot view of the disk's head, so every read of one download sees the file as it was when
// the link was opened, whatever writes come meanwhile.
//
// Thread-safety: DiskFiles is safe for concurrent use; one FileReader is used by one caller at a
// time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/ids.h"
#include "base/status.h"

namespace archil {

class FileReader {
 public:
  virtual ~FileReader() = default;
  // The file's size when it was opened.
  virtual uint64_t size() const = 0;
  // Up to `length` bytes from `offset`; fewer only at the end of the file.
  virtual Result<std::string> ReadAt(uint64_t offset, size_t length) = 0;
};

class DiskFiles {
 public:
  virtual ~DiskFiles() = default;
  // The regular file at `path` (components joined by '/', from the disk's root, none empty, "."
  // or ".."). NotFound for an unknown disk, a missing path, or anything but a regular file (a
  // directory, a symlink: links are not followed).
  virtual Result<std::unique_ptr<FileReader>> OpenFile(const DiskId& disk,
                                                       std::string_view path) = 0;
};

}  // namespace archil
