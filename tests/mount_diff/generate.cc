#include "mount_diff/generate.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace archil::testing::mount_diff {
namespace {

// Weights (per mille, roughly); as-user ops fork twice each, so they stay a small share.
constexpr std::pair<Kind, int> kWeights[] = {
    {kOpen, 110},     {kClose, 40},     {kPwrite, 100},   {kPread, 70},       {kWrite, 35},
    {kRead, 20},      {kLseek, 15},     {kSeekHole, 10},  {kFtruncate, 25},   {kTruncate, 20},
    {kFallocate, 40}, {kMmapWrite, 20}, {kRename, 70},    {kLink, 25},        {kSymlink, 25},
    {kReadlink, 12},  {kUnlink, 40},    {kMkdir, 30},     {kRmdir, 20},       {kChmod, 20},
    {kFchmod, 8},     {kChown, 15},     {kFchown, 5},     {kUtimens, 20},     {kSetxattr, 20},
    {kFsetxattr, 8},  {kGetxattr, 15},  {kListxattr, 10}, {kRemovexattr, 10}, {kOrphan, 15},
    {kFsync, 15},     {kDropCache, 15}, {kReaddir, 30},   {kStat, 40},        {kFstat, 25},
    {kAsUser, 30}};

// What an unprivileged user may try (path operations only: a child process has no slots).
constexpr Kind kUserKinds[] = {kOpen,     kOpen,    kMkdir,    kRmdir,    kUnlink,      kUnlink,
                               kRename,   kRename,  kLink,     kSymlink,  kChmod,       kChown,
                               kTruncate, kUtimens, kSetxattr, kGetxattr, kRemovexattr, kListxattr,
                               kStat,     kReaddir, kReadlink};

constexpr uint64_t k4G = uint64_t{4} << 30;

constexpr const char* kDirs[] = {"", "a/", "b/", "a/c/"};
constexpr const char* kLeaves[] = {"a", "b", "c", "f", "g"};
constexpr const char* kDirPaths[] = {".", "a", "b", "a/c"};
// Relative only, at most one "..": nothing resolves outside a run's own TOP (Lockstep).
constexpr const char* kTargets[] = {"f",    "g",    "a",      "b",       "a/c", "a/f",
                                    "../f", "../a", "c/../f", "nowhere", "."};
constexpr unsigned kFileModes[] = {0644, 0644, 0600, 0666, 0755, 0400, 0000, 04755, 02755, 0777};
constexpr unsigned kChmodModes[] = {0644,  0600,  0755, 0700, 0777,  01777, 02775,
                                    04755, 06755, 0444, 0000, 01755, 0777,  0755};
constexpr uid_t kOwners[] = {0, 1000, 1001, static_cast<uid_t>(-1)};
constexpr const char* kXattrNames[] = {"user.a", "user.b", "user.c",
                                       "user.a-much-longer-name-for-the-same-inode"};

// One of the 20 names (which include "a", "b" and "a/c").
std::string PathIn(Rng& r) { return std::string(r.Pick(kDirs)) + r.Pick(kLeaves); }

int64_t Offset(Rng& r) {
  switch (r.Below(12)) {
    case 0:
    case 1:
    case 2:
      return static_cast<int64_t>(r.Below(16384));
    case 3:
      return static_cast<int64_t>(r.Below(64) * 4096);
    case 4:
      return static_cast<int64_t>(r.Below(64) * 4096 + (r.Percent(50) ? 4095 : 1));
    case 5:
      return static_cast<int64_t>(r.Below(1 << 20));
    case 6:
      return static_cast<int64_t>(r.Below(8 << 20));
    case 7:
      return static_cast<int64_t>(k4G + r.Below(1 << 20));  // sparse, beyond 4 GiB
    case 8:
      return static_cast<int64_t>(k4G - 4096 + r.Below(8192));  // across 4 GiB
    case 9:
      return static_cast<int64_t>(k4G + r.Below(16) * 4096);
    case 10:
      return static_cast<int64_t>(65536 * r.Below(32));
    default:
      return static_cast<int64_t>(r.Below(200000));
  }
}

uint64_t Length(Rng& r) {
  switch (r.Below(20)) {
    case 0:
      return 0;
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
      return 1 + r.Below(100);
    case 6:
    case 7:
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
      return 1 + r.Below(8192);
    case 13:
    case 14:
    case 15:
      return 4096 * (1 + r.Below(8));
    default:
      return 1 + r.Below(256 << 10);
  }
}

std::string Bytes(Rng& r, size_t n) {
  std::string s(n, '\0');
  switch (r.Below(10)) {
    case 0:
      break;  // zeros
    case 1:
      std::fill(s.begin(), s.end(), char('A' + r.Below(26)));
      break;
    default:
      for (size_t i = 0; i < n; i += 8) {
        uint64_t v = r.Next();
        std::memcpy(&s[i], &v, std::min<size_t>(8, n - i));
      }
  }
  return s;
}

timespec Time(Rng& r) {
  switch (r.Below(8)) {
    case 0:
      return {0, UTIME_NOW};
    case 1:
      return {0, UTIME_OMIT};
    case 2:
      return {-static_cast<time_t>(r.Below(1'000'000'000)), long(r.Below(1'000'000'000))};
    case 3:
      return {static_cast<time_t>(3'000'000'000 + r.Below(1'000'000)),
              long(r.Below(1'000'000'000))};
    default:
      return {static_cast<time_t>(1'000'000'000 + r.Below(800'000'000)),
              long(r.Below(1'000'000'000))};
  }
}

enum class Want { kAny, kNotDir, kSymlink, kXattrs, kAbsent };

// With `want`, most of the time a name that is so (on the local side: the mount agrees, or the
// run has stopped): one that exists, is not a directory, is a symlink, has user xattrs, or does
// not exist.
std::string Existing(Rng& r, const Side& local, Want want = Want::kAny) {
  if (r.Percent(75)) {
    for (int i = 0; i < 8; ++i) {
      std::string p = PathIn(r);
      struct stat st {};
      const bool exists = lstat(local.P(p).c_str(), &st) == 0;
      char list[256];
      if (want == Want::kAbsent    ? !exists
          : !exists                ? false
          : want == Want::kNotDir  ? !S_ISDIR(st.st_mode)
          : want == Want::kSymlink ? S_ISLNK(st.st_mode)
          : want == Want::kXattrs  ? llistxattr(local.P(p).c_str(), list, sizeof(list)) > 0
                                   : true) {
        return p;
      }
    }
  }
  return PathIn(r);
}

// A slot that is open (both sides agree), most of the time.
int SlotFor(Rng& r, const Side& ref) {
  std::vector<int> open;
  for (int i = 0; i < kSlots; ++i) {
    if (ref.slots[i].fd >= 0) open.push_back(i);
  }
  if (open.empty() || r.Percent(4)) return static_cast<int>(r.Below(kSlots));
  return open[r.Below(open.size())];
}

Op GenKind(Rng& r, Kind k, const Side& ref, const Side& local, bool as_user) {
  auto old = [&] { return Existing(r, local); };
  auto old_or_root = [&] { return r.Percent(6) ? std::string(".") : Existing(r, local); };
  auto file = [&] { return Existing(r, local, Want::kNotDir); };
  auto fresh = [&] { return r.Percent(50) ? Existing(r, local, Want::kAbsent) : PathIn(r); };
  auto with_xattrs = [&] {
    return r.Percent(60) ? Existing(r, local, Want::kXattrs) : old_or_root();
  };
  Op op;
  op.kind = k;
  switch (k) {
    case kOpen: {
      op.slot = static_cast<int>(r.Below(kSlots));
      op.p1 = r.Percent(5) ? old_or_root() : file();
      const int acc[] = {O_RDONLY, O_WRONLY, O_RDWR, O_RDWR};
      op.flags = r.Pick(acc);
      if (r.Percent(60)) op.flags |= O_CREAT;
      if ((op.flags & O_CREAT) && r.Percent(15)) op.flags |= O_EXCL;
      if (r.Percent(12)) op.flags |= O_TRUNC;
      if (r.Percent(20)) op.flags |= O_APPEND;
      if (r.Percent(12)) op.flags |= O_DIRECT;
      if (r.Percent(8)) op.flags |= r.Percent(50) ? O_SYNC : O_DSYNC;
      if (r.Percent(4)) op.flags |= O_NOFOLLOW;
      if (r.Percent(3)) op.flags |= O_DIRECTORY;
      op.mode = r.Pick(kFileModes);
      if (as_user && r.Percent(50)) op.data = Bytes(r, 1 + r.Below(3000));
      break;
    }
    case kClose:
    case kFstat:
    case kDropCache:
      op.slot = SlotFor(r, ref);
      break;
    case kFsync:
      op.slot = SlotFor(r, ref);
      op.flags = r.Percent(50);
      break;
    case kPwrite:
    case kPread: {
      op.slot = SlotFor(r, ref);
      op.off = Offset(r);
      op.len = Length(r);
      if ((ref.slots[op.slot].flags & O_DIRECT) && r.Percent(80)) {  // aligned direct I/O
        op.off &= ~int64_t{4095};
        op.len = 4096 * (1 + r.Below(16));
      }
      if (k == kPwrite) op.data = Bytes(r, op.len);
      break;
    }
    case kWrite:
    case kRead: {
      op.slot = SlotFor(r, ref);
      op.len = Length(r);
      if ((ref.slots[op.slot].flags & O_DIRECT) && r.Percent(80)) op.len = 4096 * (1 + r.Below(4));
      if (k == kWrite) op.data = Bytes(r, op.len);
      break;
    }
    case kLseek:
      op.slot = SlotFor(r, ref);
      op.flags = static_cast<int>(r.Below(3));
      op.off = op.flags == SEEK_SET ? Offset(r) : static_cast<int64_t>(r.Below(20000)) - 10000;
      break;
    case kSeekHole:
      op.slot = SlotFor(r, ref);
      op.flags = r.Percent(50) ? SEEK_DATA : SEEK_HOLE;
      op.off = Offset(r);
      break;
    case kFtruncate:
    case kTruncate:
      if (k == kFtruncate)
        op.slot = SlotFor(r, ref);
      else
        op.p1 = old();
      op.len = r.Percent(30) ? r.Below(8192) : static_cast<uint64_t>(Offset(r));
      break;
    case kFallocate: {
      op.slot = SlotFor(r, ref);
      const int modes[] = {0,
                           0,
                           FALLOC_FL_KEEP_SIZE,
                           FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                           FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                           FALLOC_FL_ZERO_RANGE,
                           FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
                           FALLOC_FL_PUNCH_HOLE};
      op.flags = r.Pick(modes);
      op.off = Offset(r);
      op.len = r.Percent(5) ? 0 : r.Percent(50) ? 1 + r.Below(20000) : 1 + r.Below(4 << 20);
      break;
    }
    case kMmapWrite:
      op.slot = SlotFor(r, ref);
      op.off = Offset(r) & ~int64_t{4095};
      op.len = 4096 * (1 + r.Below(3));
      op.data = Bytes(r, op.len);
      break;
    case kRename: {
      op.p1 = old();
      op.p2 = r.Percent(40) ? old() : PathIn(r);
      int f = static_cast<int>(r.Below(10));
      op.flags = f < 7 ? 0 : f < 8 ? RENAME_NOREPLACE : RENAME_EXCHANGE;
      break;
    }
    case kLink:
      op.p1 = r.Percent(70) ? file() : old();
      op.p2 = fresh();
      op.flags = r.Percent(15);
      break;
    case kSymlink:
      op.data = r.Pick(kTargets);
      op.p2 = fresh();
      break;
    case kReadlink:
      op.p1 = r.Percent(70) ? Existing(r, local, Want::kSymlink) : old();
      break;
    case kUnlink:
      op.p1 = old();
      break;
    case kRmdir:
      op.p1 = r.Percent(50) ? kDirPaths[1 + r.Below(3)] : old();
      break;
    case kReaddir:
      op.p1 = r.Percent(70) ? r.Pick(kDirPaths) : old();
      break;
    case kMkdir: {
      op.p1 = r.Percent(60) ? kDirPaths[1 + r.Below(3)] : PathIn(r);
      const unsigned modes[] = {0755, 0777, 0700, 01777, 02775, 0555, 0750};
      op.mode = r.Pick(modes);
      break;
    }
    case kChmod:
    case kFchmod:
      if (k == kChmod)
        op.p1 = old_or_root();
      else
        op.slot = SlotFor(r, ref);
      op.mode = r.Pick(kChmodModes);
      break;
    case kChown:
    case kFchown:
      if (k == kChown)
        op.p1 = old_or_root();
      else
        op.slot = SlotFor(r, ref);
      op.uid = r.Pick(kOwners);
      op.gid = r.Pick(kOwners);
      op.nofollow = k == kChown && r.Percent(25);
      break;
    case kUtimens:
      op.p1 = old_or_root();
      op.ts[0] = Time(r);
      op.ts[1] = Time(r);
      op.nofollow = r.Percent(20);
      break;
    case kSetxattr:
    case kFsetxattr: {
      if (k == kSetxattr)
        op.p1 = old_or_root();
      else
        op.slot = SlotFor(r, ref);
      op.name = r.Pick(kXattrNames);
      op.data = Bytes(r, r.Percent(10) ? 0 : 1 + r.Below(200));
      const int fl[] = {0, 0, XATTR_CREATE, XATTR_REPLACE};
      op.flags = r.Pick(fl);
      op.nofollow = k == kSetxattr && r.Percent(15);
      break;
    }
    case kGetxattr: {
      op.p1 = with_xattrs();
      op.name = r.Pick(kXattrNames);
      const uint64_t sizes[] = {0, 4096, 4096, 3};
      op.len = r.Pick(sizes);
      op.nofollow = r.Percent(15);
      break;
    }
    case kListxattr: {
      op.p1 = r.Percent(20) ? r.Pick(kDirPaths) : with_xattrs();
      const uint64_t sizes[] = {0, 4096, 4096, 5};
      op.len = r.Pick(sizes);
      op.nofollow = r.Percent(15);
      break;
    }
    case kRemovexattr:
      op.p1 = with_xattrs();
      op.name = r.Pick(kXattrNames);
      break;
    case kOrphan:
      op.slot = SlotFor(r, ref);
      op.off = r.Percent(80) ? static_cast<int64_t>(r.Below(20000)) : Offset(r);
      op.data = Bytes(r, 1 + r.Below(5000));
      break;
    case kStat:
      op.p1 = r.Percent(10) ? r.Pick(kDirPaths) : old();
      op.nofollow = r.Percent(50);
      break;
    default:
      break;
  }
  return op;
}

}  // namespace

Op Gen(Rng& r, const Side& ref, const Side& local) {
  int total = 0;
  for (auto [k, w] : kWeights) total += w;
  int x = static_cast<int>(r.Below(static_cast<uint64_t>(total)));
  Kind k = kStat;
  for (auto [kk, w] : kWeights) {
    if (x < w) {
      k = kk;
      break;
    }
    x -= w;
  }
  if (k != kAsUser) return GenKind(r, k, ref, local, false);
  Op op = GenKind(r, r.Pick(kUserKinds), ref, local, true);
  op.as = r.Percent(60) ? 1000 : 1001;
  return op;
}

}  // namespace archil::testing::mount_diff
