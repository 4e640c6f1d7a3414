#include "mount_diff/ops.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

namespace archil::testing::mount_diff {
namespace {

// ---- The allowed differences: the only ones. Code that tolerates one names it by id (Allowed),
// so every use is counted and printed. `temporary` marks a product bug let through for now so the
// rest of the run can proceed; each must be fixed and its entry removed.

struct AllowedDifference {
  const char* id;
  const char* what;
  const char* why;
  bool temporary;
};

constexpr AllowedDifference kAllowed[] = {
    {"ino_dev", "st_ino, st_dev and d_ino are not compared between the sides",
     "two file systems number their inodes differently; instead each side must be consistent "
     "with itself: d_ino equals lstat's st_ino, and names that are hard links of each other on "
     "one side are so on the other",
     false},
    {"st_blocks", "st_blocks is not compared",
     "the mount counts written 4 KiB blocks and nothing for fallocated ranges (semantics.md "
     "§3.6, §3.10); ext4 counts allocated blocks, unwritten extents from fallocate included, "
     "plus extent-tree blocks and delayed allocations",
     false},
    {"st_blksize", "st_blksize is not compared", "an I/O size hint, not file-system state", false},
    {"dir_size", "st_size of directories is not compared",
     "ext4 reports the blocks of its directory file (4096 and growing, never shrinking); the "
     "mount reports its own number",
     false},
    {"times",
     "atime, mtime and ctime are compared only right after a utimensat that set them "
     "explicitly",
     "each side stamps changes with its own clock at its own instant; the mount is noatime while "
     "the local ext4 is relatime, which also stamps a symlink's atime when a path walk follows "
     "it (semantics.md §3.6, §3.9)",
     false},
    {"seek_data_hole",
     "lseek SEEK_DATA/SEEK_HOLE before EOF: both answers need only lie in [offset, size] (or be "
     "SEEK_DATA's ENXIO on ext4); at or past EOF they must be equal",
     "the mount has no lseek handler yet, so the kernel's generic lseek reports [0, size) as "
     "one data extent; ext4 reports its holes (semantics.md §3.25 promises real holes later)",
     false},
    {"killpriv_root",
     "a regular file root wrote data to may lose S_ISUID (and S_ISGID if group-executable) on "
     "the mount and keep them on ext4; the ext4 file is then given the mount's mode",
     "semantics.md §3.3 and §6: the server clears the set-ID bits on every write, even root's "
     "(src/engine/fs/disk_fs_data.cc, DiskFs::Write); ext4 keeps them for a writer with "
     "CAP_FSETID. "
     "On a writeback mount the bits go when the dirty pages are written back, not at write(2)",
     false},
    {"odirect_short_read",
     "an O_DIRECT|O_SYNC (or O_DSYNC) read of a range past the server's size but inside the "
     "kernel's (grown by buffered writes through another descriptor, still in the page cache) "
     "ends there on the mount (short, or 0 = EOF) where ext4 returns zeros; the test takes "
     "ext4's result",
     "semantics.md §0: such opens get direct_io (one WRITE per O_SYNC write), so the kernel "
     "returns the daemon's short read as it is; plain O_DIRECT opens take the kernel's O_DIRECT "
     "path, which reads on through the page cache",
     false},
    {"dir_lseek", "lseek on a directory descriptor is not compared",
     "directory offsets are each file system's own cookies (ext4: name hashes up to 2^63-1), "
     "and SEEK_END, SEEK_DATA and SEEK_HOLE depend on the directory's size (dir_size)",
     false},
    {"dotdot_ino", "d_ino of \"..\" on the mount is the directory's own number, not its parent's",
     "MountCore synthesises \"..\" without knowing the parent (inodes do not record it) and "
     "cannot leave it 0, which readdir(3) skips (src/fs/mount_core.cc, ReadDir)",
     false},
    {"odirect_align",
     "O_DIRECT reads and writes not aligned to 512 bytes: ext4 returns EINVAL, the mount "
     "accepts them; the test then repeats the call on ext4 without O_DIRECT",
     "semantics.md §3.1: the mount has no O_DIRECT alignment requirement", false},
    {"odirect_mmap",
     "MAP_SHARED of an O_DIRECT|O_SYNC (or O_DSYNC) descriptor: ENODEV on the mount; on ext4 the "
     "mapping is made "
     "and dropped unwritten",
     "semantics.md §3.20: libfuse 3.14 cannot negotiate FUSE_DIRECT_IO_ALLOW_MMAP", false},
};

int g_allowed_uses[std::size(kAllowed)];

}  // namespace

// Opens the mount serves with direct_io (src/fuse/fuse_adapter.cc, SetOpenFlags).
bool DirectIo(int flags) { return (flags & O_DIRECT) && (flags & (O_SYNC | O_DSYNC)); }

// Marks one use of an allowed difference; `id` must be in kAllowed.
bool Allowed(std::string_view id) {
  for (size_t i = 0; i < std::size(kAllowed); ++i) {
    if (id == kAllowed[i].id) {
      ++g_allowed_uses[i];
      return true;
    }
  }
  std::fprintf(stderr, "mount_diff_test: '%.*s' is not in kAllowed\n", int(id.size()), id.data());
  std::abort();
}

std::string AllowedUses() {
  std::string s;
  for (size_t i = 0; i < std::size(kAllowed); ++i) {
    if (g_allowed_uses[i] == 0) continue;
    s += std::string(s.empty() ? "" : ", ") + kAllowed[i].id +
         (kAllowed[i].temporary ? "(TEMPORARY)" : "") + "=" + std::to_string(g_allowed_uses[i]);
  }
  return s.empty() ? "none" : s;
}

void ResetAllowedUses() { std::fill(std::begin(g_allowed_uses), std::end(g_allowed_uses), 0); }

uint64_t SeedFromEnvOrClock() {
  if (const char* e = std::getenv("ARCHIL_TEST_SEED"); e != nullptr && *e != '\0') {
    return std::strtoull(e, nullptr, 10);
  }
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) %
         1'000'000'000;
}

std::string SeedText(uint64_t seed) {
  return "seed=" + std::to_string(seed) + " (replay: ARCHIL_TEST_SEED=" + std::to_string(seed) +
         ")";
}

// ---- Results as text.

std::string Err(int e) {
  const char* n = strerrorname_np(e);
  return n != nullptr ? n : "errno " + std::to_string(e);
}

// "ok", "ok N" or the errno's name; call right after the call whose result it is.
std::string Rc(long rc) {
  if (rc < 0) return Err(errno);
  return rc == 0 ? "ok" : "ok " + std::to_string(rc);
}

uint64_t Fnv(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string Oct(unsigned v) {
  char b[16];
  std::snprintf(b, sizeof(b), "0%o", v);
  return b;
}

// The fields of a stat both sides must agree on (kAllowed: ino_dev, st_blocks, st_blksize,
// dir_size, times).
std::string StatText(const struct stat& st) {
  Allowed("st_blocks");
  Allowed("st_blksize");
  Allowed("times");
  std::string s = "mode=" + Oct(st.st_mode) + " nlink=" + std::to_string(st.st_nlink) +
                  " uid=" + std::to_string(st.st_uid) + " gid=" + std::to_string(st.st_gid);
  if (S_ISDIR(st.st_mode)) {
    Allowed("dir_size");
  } else {
    s += " size=" + std::to_string(st.st_size);
  }
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) s += " rdev=" + std::to_string(st.st_rdev);
  return s;
}

std::string OpenFlagsText(int f) {
  std::string s;
  switch (f & O_ACCMODE) {
    case O_RDONLY:
      s = "O_RDONLY";
      break;
    case O_WRONLY:
      s = "O_WRONLY";
      break;
    default:
      s = "O_RDWR";
      break;
  }
  const std::pair<int, const char*> bits[] = {
      {O_CREAT, "O_CREAT"},   {O_EXCL, "O_EXCL"},     {O_TRUNC, "O_TRUNC"},
      {O_APPEND, "O_APPEND"}, {O_DIRECT, "O_DIRECT"}, {O_NOFOLLOW, "O_NOFOLLOW"},
      {O_SYNC, "O_SYNC"},     {O_DSYNC, "O_DSYNC"},   {O_DIRECTORY, "O_DIRECTORY"}};
  for (auto [bit, name] : bits) {
    if (f & bit) s += std::string("|") + name;
  }
  return s;
}

std::string UserXattrs(const std::string& list) {
  std::vector<std::string> names;
  for (size_t i = 0; i < list.size();) {
    size_t j = list.find('\0', i);
    if (j == std::string::npos) j = list.size();
    std::string n = list.substr(i, j - i);
    if (n.rfind("user.", 0) == 0) names.push_back(n);
    i = j + 1;
  }
  std::sort(names.begin(), names.end());
  std::string s;
  for (auto& n : names) s += " " + n;
  return s;
}

std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  char buf[160];
  std::snprintf(buf, sizeof(buf),
                "%zu vs %zu bytes, first difference at byte %zu (0x%02x vs 0x%02x)", a.size(),
                b.size(), i, i < a.size() ? unsigned(uint8_t(a[i])) : 0u,
                i < b.size() ? unsigned(uint8_t(b[i])) : 0u);
  return buf;
}

namespace {

std::string TsText(const timespec& t) {
  if (t.tv_nsec == UTIME_NOW) return "NOW";
  if (t.tv_nsec == UTIME_OMIT) return "OMIT";
  return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec);
}

std::string Q(const std::string& p) { return "\"" + p + "\""; }

}  // namespace

std::string Describe(const Op& op) {
  std::string s = op.as ? "[uid " + std::to_string(op.as) + "] " : "";
  const std::string slot = "slot " + std::to_string(op.slot);
  const std::string dl = "len=" + std::to_string(op.len);
  const std::string at = ", off=" + std::to_string(op.off);
  const std::string nf = op.nofollow ? ", no-follow" : "";
  switch (op.kind) {
    case kOpen:
      s += "open(" + Q(op.p1) + ", " + OpenFlagsText(op.flags) + ", " + Oct(op.mode) + ") -> " +
           slot;
      if (!op.data.empty()) s += ", then write " + std::to_string(op.data.size()) + " bytes";
      return s;
    case kFsync:
      return s + (op.flags ? "fdatasync(" : "fsync(") + slot + ")";
    case kDropCache:
      return s + "fdatasync + posix_fadvise(" + slot + ", POSIX_FADV_DONTNEED)";
    case kClose:
    case kFstat:
      return s + kKindNames[op.kind] + "(" + slot + ")";
    case kPwrite:
    case kMmapWrite:
      return s + kKindNames[op.kind] + "(" + slot + at + ", len=" + std::to_string(op.data.size()) +
             ")";
    case kPread:
      return s + "pread(" + slot + at + ", " + dl + ")";
    case kWrite:
      return s + "write(" + slot + ", len=" + std::to_string(op.data.size()) + ")";
    case kRead:
      return s + "read(" + slot + ", " + dl + ")";
    case kLseek:
    case kSeekHole: {
      const char* w[] = {"SEEK_SET", "SEEK_CUR", "SEEK_END", "SEEK_DATA", "SEEK_HOLE"};
      return s + "lseek(" + slot + ", " + std::to_string(op.off) + ", " + w[op.flags] + ")";
    }
    case kFtruncate:
      return s + "ftruncate(" + slot + ", " + std::to_string(op.len) + ")";
    case kTruncate:
      return s + "truncate(" + Q(op.p1) + ", " + std::to_string(op.len) + ")";
    case kFallocate: {
      std::string m;
      if (op.flags & FALLOC_FL_KEEP_SIZE) m += "|KEEP_SIZE";
      if (op.flags & FALLOC_FL_PUNCH_HOLE) m += "|PUNCH_HOLE";
      if (op.flags & FALLOC_FL_ZERO_RANGE) m += "|ZERO_RANGE";
      m = m.empty() ? "0" : m.substr(1);
      return s + "fallocate(" + slot + ", " + m + at + ", " + dl + ")";
    }
    case kRename: {
      const char* f = op.flags == RENAME_NOREPLACE  ? ", RENAME_NOREPLACE"
                      : op.flags == RENAME_EXCHANGE ? ", RENAME_EXCHANGE"
                                                    : "";
      return s + "renameat2(" + Q(op.p1) + ", " + Q(op.p2) + f + ")";
    }
    case kLink:
      return s + "linkat(" + Q(op.p1) + ", " + Q(op.p2) + (op.flags ? ", AT_SYMLINK_FOLLOW" : "") +
             ")";
    case kSymlink:
      return s + "symlink(" + Q(op.data) + ", " + Q(op.p2) + ")";
    case kReadlink:
    case kUnlink:
    case kRmdir:
    case kReaddir:
      return s + kKindNames[op.kind] + "(" + Q(op.p1) + ")";
    case kMkdir:
    case kChmod:
      return s + kKindNames[op.kind] + "(" + Q(op.p1) + ", " + Oct(op.mode) + ")";
    case kFchmod:
      return s + "fchmod(" + slot + ", " + Oct(op.mode) + ")";
    case kChown:
    case kFchown:
      return s +
             (op.kind == kFchown ? "fchown(" + slot
                                 : (op.nofollow ? "lchown(" : "chown(") + Q(op.p1)) +
             ", " + std::to_string(int(op.uid)) + ", " + std::to_string(int(op.gid)) + ")";
    case kUtimens:
      return s + "utimensat(" + Q(op.p1) + ", atime=" + TsText(op.ts[0]) +
             ", mtime=" + TsText(op.ts[1]) + (op.nofollow ? ", AT_SYMLINK_NOFOLLOW" : "") + ")";
    case kSetxattr:
    case kFsetxattr:
      return s + kKindNames[op.kind] + "(" + (op.kind == kSetxattr ? Q(op.p1) : slot) + ", " +
             op.name + ", value of " + std::to_string(op.data.size()) +
             " bytes, flags=" + std::to_string(op.flags) + nf + ")";
    case kGetxattr:
      return s + "getxattr(" + Q(op.p1) + ", " + op.name + ", size=" + std::to_string(op.len) + nf +
             ")";
    case kListxattr:
      return s + "listxattr(" + Q(op.p1) + ", size=" + std::to_string(op.len) + nf + ")";
    case kRemovexattr:
      return s + "removexattr(" + Q(op.p1) + ", " + op.name + ")";
    case kOrphan:
      return s + "unlink-open(" + slot + ": unlink its path, then pwrite " +
             std::to_string(op.data.size()) + " bytes" + at + ", pread, fstat)";
    case kStat:
      return s + (op.nofollow ? "lstat(" : "stat(") + Q(op.p1) + ")";
    default:
      return s + kKindNames[op.kind];
  }
}
}  // namespace archil::testing::mount_diff
