// The vocabulary of the differential test (tests/mount_diff_test.cc), shared by its other files:
// the allowed differences between the mount and ext4 (their one table, kAllowed, is in ops.cc),
// the seeded random numbers, results written as text (the two sides' results are compared as
// strings), and the operations (Kind, Op) with their one-line descriptions.
//
// Contract: everything here is a function of its arguments (Rng of its seed: the same sequence on
// every machine), except SeedFromEnvOrClock (the environment, else the clock), Rc (errno) and the
// counts behind Allowed and AllowedUses, which are the process's own: a forked child counts its
// uses for itself. Not thread-safe (those counts).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace archil::testing::mount_diff {

// ---- The allowed differences: the only ones, each with its reason in kAllowed (ops.cc). Code
// that tolerates one names it by id (Allowed), so every use is counted and printed.

// Counts one use of the allowed difference `id` and returns true (so that it can end a condition:
// `... && Allowed("dir_lseek")`). An `id` that is not in kAllowed aborts the process.
bool Allowed(std::string_view id);

// The uses counted since ResetAllowedUses (or the start), as "id=N, ..." in kAllowed's order, a
// temporary one marked "(TEMPORARY)"; "none" if none.
std::string AllowedUses();
void ResetAllowedUses();

// Whether an open with these flags is one the mount serves with direct_io
// (src/fuse/fuse_adapter.cc, SetOpenFlags).
bool DirectIo(int flags);

// ---- Randomness: splitmix64, so a seed replays the same sequence everywhere.

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : Next() % n; }
  bool Percent(unsigned p) { return Below(100) < p; }
  template <typename T, size_t N>
  T Pick(const T (&a)[N]) {
    return a[Below(N)];
  }

 private:
  uint64_t s_;
};

// ARCHIL_TEST_SEED if set and not empty, else the clock (microseconds, modulo 10^9).
uint64_t SeedFromEnvOrClock();

// "seed=N (replay: ARCHIL_TEST_SEED=N)": what the test prints first and every failure carries.
std::string SeedText(uint64_t seed);

// ---- Results as text.

// The errno's name ("ENOENT"), or "errno N".
std::string Err(int e);

// "ok", "ok N" or the errno's name; call right after the call whose result it is.
std::string Rc(long rc);

// FNV-1a, 64 bits.
uint64_t Fnv(std::string_view s);

// `v` in octal, with a leading 0.
std::string Oct(unsigned v);

// The fields of a stat both sides must agree on (kAllowed: ino_dev, st_blocks, st_blksize,
// dir_size, times).
std::string StatText(const struct stat& st);

// The access mode and the flags the test uses, as in C: "O_RDWR|O_CREAT|O_EXCL".
std::string OpenFlagsText(int f);

// The user.* names in a listxattr(2) answer (names, each ending in NUL), sorted, each after a
// space: " user.a user.b"; "" if none.
std::string UserXattrs(const std::string& list);

// Where two byte strings first differ, for a failure: both sizes, that byte's offset and values.
std::string FirstDifference(const std::string& a, const std::string& b);

// ---- Operations.

enum Kind {
  kOpen,
  kClose,
  kPwrite,
  kPread,
  kWrite,
  kRead,
  kLseek,
  kSeekHole,
  kFtruncate,
  kTruncate,
  kFallocate,
  kMmapWrite,
  kRename,
  kLink,
  kSymlink,
  kReadlink,
  kUnlink,
  kMkdir,
  kRmdir,
  kChmod,
  kFchmod,
  kChown,
  kFchown,
  kUtimens,
  kSetxattr,
  kFsetxattr,
  kGetxattr,
  kListxattr,
  kRemovexattr,
  kOrphan,
  kFsync,
  kDropCache,
  kReaddir,
  kStat,
  kFstat,
  kAsUser,
  kKinds
};

inline constexpr const char* kKindNames[kKinds] = {
    "open",        "close",       "pwrite",    "pread",
    "write",       "read",        "lseek",     "lseek-data-hole",
    "ftruncate",   "truncate",    "fallocate", "mmap-write",
    "rename",      "link",        "symlink",   "readlink",
    "unlink",      "mkdir",       "rmdir",     "chmod",
    "fchmod",      "chown",       "fchown",    "utimensat",
    "setxattr",    "fsetxattr",   "getxattr",  "listxattr",
    "removexattr", "unlink-open", "fsync",     "fadvise-dontneed",
    "readdir",     "stat",        "fstat",     "as-user"};

// Open files live in a table of kSlots slots, mirrored on both sides (Side); Op::slot indexes it.
inline constexpr int kSlots = 8;

struct Op {
  Kind kind = kStat;
  int slot = 0;
  std::string p1, p2;  // relative to the side's root
  int64_t off = 0;
  uint64_t len = 0;
  int flags = 0;  // open flags, rename flags, fallocate mode, whence, xattr flags, ...
  unsigned mode = 0;
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  std::string data;  // bytes to write, symlink target, xattr value
  std::string name;  // xattr name
  timespec ts[2] = {};
  bool nofollow = false;
  uid_t as = 0;  // non-zero: run as this uid (and gid), in a child process
};

// The op as one line for failures and traces, written as the C call with its arguments.
std::string Describe(const Op& op);

}  // namespace archil::testing::mount_diff
