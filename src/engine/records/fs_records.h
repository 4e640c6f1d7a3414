// Values of the versioned file-system CFs other than `chunk` (formats.md §4.2-4.4, §4.7): inode
// bodies, link back-references, truncate records, dentries and xattrs. Each value is an Envelope
// (envelope.h) followed by the body; a WHITEOUT has no body.
//
// Encode*: with env.kind == kWhiteout only the envelope is written (the body is ignored).
// Decode*: strict. Corruption for an unknown fmt ("<cf> fmt N unsupported"), a wrong length
// (naming the record), or a body that breaks the format's rules.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/records/envelope.h"
#include "engine/types.h"

namespace archil::engine {

// ---- inode (92 + optional 2 + n bytes of body) ----
inline constexpr uint32_t kInodeFlagHasXattrs = 1 << 0;
inline constexpr uint32_t kInodeFlagHasTrunc = 1 << 1;
inline constexpr uint32_t kInodeFlagHasAcl = 1 << 2;
struct InodeRecord {
  uint32_t mode = 0;  // S_IFMT type bits + permission bits
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t nlink = 0;
  uint32_t flags = 0;
  uint64_t size = 0;
  int64_t atime = 0;
  int64_t mtime = 0;
  int64_t ctime = 0;
  int64_t btime = 0;
  uint64_t change = 0;
  Ino parent;  // directories only (root: 1); 0 otherwise
  uint64_t blocks = 0;
  uint32_t rdev = 0;
  uint32_t tgen = 0;
  // formats.md: "symlinks only, absent otherwise". Chosen: written (u16 length + bytes) iff the
  // mode is S_IFLNK, even when empty; extra bytes after a non-symlink body are Corruption.
  std::string symlink_target;
  bool operator==(const InodeRecord&) const = default;
};
inline constexpr size_t kInodeValueSize = 104;  // without the symlink target
bool IsSymlinkMode(uint32_t mode);
// REQUIRES: symlink_target.size() <= kMaxSymlinkTarget; target empty unless a symlink.
std::string EncodeInode(const Envelope& env, const InodeRecord& r);
Result<Versioned<InodeRecord>> DecodeInode(std::string_view v);

// ---- link back-reference (16 bytes) ----
struct BackrefRecord {
  uint32_t links = 0;  // names of this inode in the directory the key names
  bool operator==(const BackrefRecord&) const = default;
};
std::string EncodeBackref(const Envelope& env, const BackrefRecord& r);
Result<Versioned<BackrefRecord>> DecodeBackref(std::string_view v);

// ---- truncate record (20 bytes) ----
struct TruncateRecord {
  uint64_t size = 0;
  bool operator==(const TruncateRecord&) const = default;
};
std::string EncodeTruncate(const Envelope& env, const TruncateRecord& r);
Result<Versioned<TruncateRecord>> DecodeTruncate(std::string_view v);

// ---- dentry (21 bytes) ----
struct DentryRecord {
  Ino ino;
  uint8_t dtype = 0;  // DT_REG, DT_DIR, DT_LNK, ...
  bool operator==(const DentryRecord&) const = default;
};
std::string EncodeDentry(const Envelope& env, const DentryRecord& r);
Result<Versioned<DentryRecord>> DecodeDentry(std::string_view v);

// ---- xattr (12 + 0..65536 bytes) ----
struct XattrRecord {
  std::string value;  // REQUIRES (encode): <= kMaxXattrValue bytes
  bool operator==(const XattrRecord&) const = default;
};
std::string EncodeXattr(const Envelope& env, const XattrRecord& r);
Result<Versioned<XattrRecord>> DecodeXattr(std::string_view v);

}  // namespace archil::engine
