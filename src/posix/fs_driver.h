// FsDriver: random operation sequences over a FileSystem, and a comparison of two trees: the
// machinery of crash and differential tests (the engine against ModelFs).
//
// Operations name files by path (from the root), not by inode number, so two file systems that
// number inodes differently still run the same sequence. Each operation's outcome is an errno
// (0 for success) plus, for reads, the bytes; two file systems agree on an operation when their
// outcomes are equal.
//
// Thread-safety: an FsDriver is used by one thread; FileSystems as theirs.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "posix/file_system.h"

namespace archil::posix {

struct FsOp {
  enum class Kind {
    kCreate,
    kMkdir,
    kSymlink,
    kLink,
    kUnlink,
    kRmdir,
    kRename,
    kWrite,
    kTruncate,
    kFallocate,
    kSetXattr,
    kRemoveXattr,
    kChmod,
    kChown,
    kUtimens,
    kOpen,
    kRelease,
    kRead,
  };
  Kind kind = Kind::kCreate;
  std::string path;   // the object operated on ("a/b/c")
  std::string path2;  // link and rename targets; symlink target text
  uint64_t offset = 0;
  uint64_t length = 0;
  uint32_t mode = 0;  // create/mkdir/chmod mode, fallocate mode, rename or xattr flags
  uint32_t id = 0;    // chown uid, fill byte for writes and xattr values
  int handle = -1;    // write/read/truncate/release through this open handle instead of `path`
  std::string name;   // xattr name
};

struct FsOutcome {
  int err = 0;       // 0: success
  std::string data;  // kRead: the bytes read
  bool operator==(const FsOutcome&) const = default;
};

// One line for logs and failure messages: "rename a/b -> c flags 1".
std::string Describe(const FsOp& op);

// Resolves `path` from the root ("" is the root).
Result<Attr> ResolvePath(FileSystem* fs, const std::string& path);

// Runs `op` on `fs`. `handles` maps the driver's open-handle numbers to inodes of this file system
// (kOpen adds, kRelease removes); HolderId(1) holds every handle.
FsOutcome Apply(FileSystem* fs, const FsOp& op, std::vector<Ino>* handles);

// Generates operations from a seeded engine over a small name space (so that names collide,
// directories fill and empty, renames replace), with the paths that exist in `view` (a
// FileSystem whose state matches the ones the ops will run on; usually the model).
class FsOpGenerator {
 public:
  explicit FsOpGenerator(uint64_t seed) : rng_(seed) {}
  FsOp Next(FileSystem* view, size_t open_handles);

 private:
  std::string RandomExistingPath(FileSystem* view, bool dirs_only);
  std::string RandomNewPath(FileSystem* view);
  std::mt19937_64 rng_;
};

struct CompareOptions {
  bool times = false;   // compare mtime/ctime/atime (only when both ran on the same clock)
  bool blocks = false;  // compare st_blocks
};

// OK when both trees hold the same names, types, modes, owners, link counts, sizes, data, symlink
// targets and xattrs; otherwise Internal naming the first difference. Data is compared byte for
// byte in the first 64 MiB and the last 2 MiB of each file, and in one 1 MiB window per 64 MiB in
// between.
Status CompareTrees(FileSystem* a, FileSystem* b, const CompareOptions& options = {});

}  // namespace archil::posix
