// The vocabulary of one disk's file-system operations, shared by the storage engine, the disk
// server, the client core and the reference model: inode numbers, attributes, attribute changes,
// directory pages, and the limits and flags of docs/semantics.md.
//
// Thread-safety: values; copy freely.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.h"
#include "base/status.h"

namespace archil::posix {

// An inode number: also the FUSE node id. Never reused within a disk's lineage.
using Ino = StrongInt<struct InoTag>;
inline constexpr Ino kRootIno{1};

// Who holds an inode open (a session's public id): an unlinked inode lives while it has holders.
using HolderId = StrongInt<struct HolderTag>;

inline constexpr size_t kNameMax = 255;          // bytes in one directory entry name
inline constexpr size_t kSymlinkMax = 4095;      // bytes in a symlink target
inline constexpr size_t kXattrNameMax = 255;     // bytes, namespace prefix included
inline constexpr size_t kXattrValueMax = 65536;  // bytes
// Per inode: the names' list as listxattr returns it (each name and its NUL) fits Linux's
// XATTR_LIST_MAX, and all values together take at most 1 MiB.
inline constexpr size_t kXattrNamesMax = 65536;             // bytes of "name\0" over an inode
inline constexpr size_t kXattrValuesMax = size_t{1} << 20;  // bytes of values over an inode
inline constexpr uint64_t kMaxFileSize = (uint64_t{1} << 63) - 1;
inline constexpr uint32_t kBlockSize = 4096;  // st_blocks counts 512-byte units of these

// Flags with Linux's values, so the FUSE adapter passes them through.
inline constexpr uint32_t kRenameNoReplace = 1;  // RENAME_NOREPLACE
inline constexpr uint32_t kRenameExchange = 2;   // RENAME_EXCHANGE
inline constexpr uint32_t kXattrCreate = 1;      // XATTR_CREATE
inline constexpr uint32_t kXattrReplace = 2;     // XATTR_REPLACE
inline constexpr uint32_t kFallocKeepSize = 0x01;
inline constexpr uint32_t kFallocPunchHole = 0x02;
inline constexpr uint32_t kFallocZeroRange = 0x10;

struct Timespec {
  int64_t sec = 0;
  uint32_t nsec = 0;  // < 1e9
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads defaulted <=>
  auto operator<=>(const Timespec&) const = default;
  static Timespec FromMicros(int64_t micros);
  // Nanoseconds since the epoch (the disk protocol's times), both ways; negative times floor.
  static Timespec FromNanos(int64_t nanos);
  int64_t nanos() const { return sec * 1'000'000'000 + nsec; }
};

struct Attr {
  Ino ino;
  uint32_t mode = 0;  // S_IFMT type bits | permission bits (incl. setuid, setgid, sticky)
  uint32_t nlink = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t rdev = 0;    // device nodes only
  uint64_t size = 0;    // bytes; a symlink's target length
  uint64_t blocks = 0;  // 512-byte units allocated
  Timespec atime, mtime, ctime, btime;
  bool operator==(const Attr&) const = default;
};

// How a SETATTR changes one timestamp.
struct TimeUpdate {
  enum class Kind { kOmit, kNow, kValue };
  Kind kind = Kind::kOmit;
  Timespec value;  // kValue only
  static TimeUpdate Now() { return {Kind::kNow, {}}; }
  static TimeUpdate At(Timespec t) { return {Kind::kValue, t}; }
};

// A SETATTR: only what is set changes. ctime becomes now on every successful change.
struct SetAttrRequest {
  std::optional<uint32_t> mode;  // permission bits only (<= 07777); the type never changes
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint64_t> size;  // truncate or extend (regular files only)
  TimeUpdate atime;
  TimeUpdate mtime;
};

// An attribute change as the values it leaves, the change time included: what a client that
// answered a SETATTR itself sends for the disk to hold (docs/protocol.md §5.3.2, ADR 0028).
// Applying it twice leaves the same attributes.
struct AttrPut {
  Ino ino;
  std::optional<uint32_t> mode = {};  // permission bits only (<= 07777)
  std::optional<uint32_t> uid = {};
  std::optional<uint32_t> gid = {};
  std::optional<Timespec> atime = {};
  std::optional<Timespec> mtime = {};
  Timespec ctime = {};
  bool operator==(const AttrPut&) const = default;
};

// A write a client answered itself, as its data (docs/protocol.md §5.3.2, ADR 0029). Applying it
// twice leaves the same bytes.
struct WritePut {
  Ino ino;
  uint64_t offset = 0;
  std::string data;
  bool operator==(const WritePut&) const = default;
};

// A create a client answered itself: a new inode of `mode` (S_IFMT and permission bits) named
// `name` in `parent`, its number `ino` one the server granted the client (docs/protocol.md
// §5.3.2, ADR 0025). `time` is the new inode's four times and the parent's mtime and ctime.
// Applying it again (the name already names `ino`) changes nothing.
struct CreatePut {
  Ino parent;
  std::string name;
  Ino ino;
  uint32_t mode = 0;
  uint32_t rdev = 0;  // character and block devices
  uint32_t uid = 0;
  uint32_t gid = 0;
  Timespec time = {};
  bool operator==(const CreatePut&) const = default;
};

// An unlink a client answered itself (docs/protocol.md §5.3.2): removes `name` from `parent`,
// where it names `ino`, a non-directory of which it is the only name (the inode goes with it,
// unless it is open). `time` is the parent's mtime and ctime. Applying it again (the name is
// gone) changes nothing.
struct RemovePut {
  Ino parent;
  std::string name;
  Ino ino;
  Timespec time = {};
  bool operator==(const RemovePut&) const = default;
};

// What a client answered itself and sends ahead of its next request: its creates, applied
// first, then its writes, then its attribute puts (which hold the times those writes showed),
// then its removes.
struct Puts {
  std::vector<CreatePut> creates = {};
  std::vector<WritePut> writes = {};
  std::vector<AttrPut> attrs = {};
  std::vector<RemovePut> removes = {};
  bool empty() const {
    return creates.empty() && writes.empty() && attrs.empty() && removes.empty();
  }
  bool operator==(const Puts&) const = default;
};

// Owner of a new inode: the caller's uid and the gid the kernel chose (its own, or the parent's
// for a set-group-ID parent).
struct Owner {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

struct DirEntry {
  std::string name;
  Ino ino;
  uint32_t type = 0;         // S_IFMT bits of the inode
  uint64_t cookie = 0;       // ReadDir(after_cookie = this) resumes after this entry
  std::optional<Attr> attr;  // ReadDirPlus only: the inode's attributes, if they could be read
  bool operator==(const DirEntry&) const = default;
};

struct DirPage {
  std::vector<DirEntry> entries;
  bool eof = false;  // no entries after the last one returned
};

struct StatFs {
  uint64_t block_size = kBlockSize;
  uint64_t blocks = 0;
  uint64_t blocks_free = 0;
  uint64_t files = 0;
  uint64_t files_free = 0;
  uint32_t name_max = kNameMax;
};

// EINVAL for "", ".", "..", a '/' or a NUL; ENAMETOOLONG over kNameMax bytes.
Status ValidateName(std::string_view name);
// A key for `name` in directory `dir` (its number's 8 bytes, then the name), for maps of names.
std::string NameKey(Ino dir, std::string_view name);
// EOPNOTSUPP outside the namespaces we store (user., trusted., security.,
// system.posix_acl_access, system.posix_acl_default); ERANGE over kXattrNameMax; EINVAL if empty.
Status ValidateXattrName(std::string_view name);

// What an inode's xattrs take (kXattrNamesMax, kXattrValuesMax count these).
struct XattrTotals {
  size_t names = 0;   // sum of name size + 1
  size_t values = 0;  // sum of value sizes
  void Add(std::string_view name, size_t value_size) {
    names += name.size() + 1;
    values += value_size;
  }
};
// Whether setting `name` to a value of `value_size` bytes fits an inode whose xattrs take
// `now`; `old_value_size` is the size of the value it replaces (nullopt: a new name). ENOSPC,
// naming the limit, if the names' list or the values would pass theirs.
Status CheckXattrSpace(const XattrTotals& now, std::string_view name,
                       std::optional<size_t> old_value_size, size_t value_size);

}  // namespace archil::posix
