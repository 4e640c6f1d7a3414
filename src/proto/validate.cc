#include "proto/validate.h"

#include <sys/stat.h>

#include <string>

#include "base/crc32c.h"
#include "proto/setattr_bits.h"

namespace archil::proto {
namespace {

namespace v1 = ::archil::v1;

// FUSE_SET_ATTR_* bits SETATTR may carry (§5.3).
// The bits an AttrPut may carry (§5.3.2): values only, never a size.
// Linux FALLOC_FL_* values and the combinations §5.4 lists.
constexpr uint32_t kFallocKeepSize = 0x01, kFallocPunchHole = 0x02, kFallocZeroRange = 0x10;
constexpr uint32_t kRenameNoReplace = 1, kRenameExchange = 2;
constexpr uint32_t kXattrCreate = 1, kXattrReplace = 2;

WireStatus Fail(WireStatus s, std::string reason, std::string* why) {
  *why = std::move(reason);
  return s;
}

// An inode number a request names: 0 means none, never a valid target.
WireStatus CheckIno(uint64_t ino, const char* field, std::string* why) {
  if (ino == 0) return Fail(WireStatus::kInvalid, std::string(field) + " is 0", why);
  return WireStatus::kOk;
}

// A directory entry a request names: its parent and its name.
WireStatus CheckEntry(uint64_t parent, std::string_view name, std::string* why,
                      const char* parent_field = "parent") {
  if (WireStatus s = CheckIno(parent, parent_field, why); s != WireStatus::kOk) return s;
  return CheckName(name, why);
}

// offset + length within a file (§5.4).
WireStatus CheckRange(uint64_t offset, uint64_t length, std::string* why) {
  if (offset > kMaxFileEnd || length > kMaxFileEnd - offset) {
    return Fail(WireStatus::kFileTooBig, "offset + length past the largest file size", why);
  }
  return WireStatus::kOk;
}

// A type MKNOD may make, with permission bits only beside it (a create put may also make a
// directory).
bool MknodMakes(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
    case S_IFIFO:
    case S_IFSOCK:
    case S_IFCHR:
    case S_IFBLK:
      return (mode & ~(S_IFMT | 07777)) == 0;
    default:
      return false;
  }
}

WireStatus CheckXattrName(std::string_view name, bool posix_acl, std::string* why) {
  if (name.empty() || name.size() > kXattrNameMax) {
    return Fail(WireStatus::kRange, "xattr name of " + std::to_string(name.size()) + " bytes", why);
  }
  for (std::string_view ns : {"user.", "trusted.", "security."}) {
    if (name.starts_with(ns) && name.size() > ns.size()) return WireStatus::kOk;
  }
  if (posix_acl && (name == "system.posix_acl_access" || name == "system.posix_acl_default")) {
    return WireStatus::kOk;
  }
  return Fail(WireStatus::kNotSupported, "xattr namespace not supported", why);
}

#define ARCHIL_CHECK(expr)                                        \
  do {                                                            \
    if (WireStatus s_ = (expr); s_ != WireStatus::kOk) return s_; \
  } while (false)

WireStatus Namespace(const FrameHeader& h, const Message& m, std::string* why) {
  switch (h.type) {
    case kTypeLookup: {
      const auto& r = static_cast<const v1::Lookup&>(m);
      return CheckEntry(r.parent(), r.name(), why);
    }
    case kTypeGetAttr:
      return CheckIno(static_cast<const v1::GetAttr&>(m).ino(), "ino", why);
    case kTypeReadLink:
      return CheckIno(static_cast<const v1::ReadLink&>(m).ino(), "ino", why);
    case kTypeSetAttr: {
      const auto& r = static_cast<const v1::SetAttr&>(m);
      ARCHIL_CHECK(CheckIno(r.ino(), "ino", why));
      if ((r.valid() & ~kSetAttrBits) != 0) {
        return Fail(WireStatus::kInvalid, "unknown SETATTR valid bits", why);
      }
      return WireStatus::kOk;
    }
    case kTypeCreate: {
      const auto& r = static_cast<const v1::Create&>(m);
      ARCHIL_CHECK(CheckEntry(r.parent(), r.name(), why));
      if ((r.mode() & S_IFMT) != S_IFREG) {
        return Fail(WireStatus::kInvalid, "CREATE of a type other than a regular file", why);
      }
      return WireStatus::kOk;
    }
    case kTypeMkdir: {
      const auto& r = static_cast<const v1::Mkdir&>(m);
      return CheckEntry(r.parent(), r.name(), why);
    }
    case kTypeMknod: {
      const auto& r = static_cast<const v1::Mknod&>(m);
      ARCHIL_CHECK(CheckEntry(r.parent(), r.name(), why));
      if (!MknodMakes(r.mode() & (S_IFMT | 07777))) {
        return Fail(WireStatus::kInvalid, "MKNOD of an unsupported file type", why);
      }
      return WireStatus::kOk;
    }
    case kTypeInoGrant: {
      const auto& r = static_cast<const v1::InoGrant&>(m);
      if (r.count() < 1 || r.count() > kMaxInoGrant) {
        return Fail(WireStatus::kInvalid,
                    "an INO_GRANT of " + std::to_string(r.count()) + " numbers", why);
      }
      return WireStatus::kOk;
    }
    case kTypeSymlink: {
      const auto& r = static_cast<const v1::Symlink&>(m);
      ARCHIL_CHECK(CheckEntry(r.parent(), r.name(), why));
      if (r.target().empty() || r.target().find('\0') != std::string::npos) {
        return Fail(WireStatus::kInvalid, "symlink target empty or holding NUL", why);
      }
      if (r.target().size() > kSymlinkMax) {
        return Fail(WireStatus::kNameTooLong, "symlink target over 4095 bytes", why);
      }
      return WireStatus::kOk;
    }
    case kTypeLink: {
      const auto& r = static_cast<const v1::Link&>(m);
      ARCHIL_CHECK(CheckIno(r.ino(), "ino", why));
      return CheckEntry(r.new_parent(), r.new_name(), why, "new_parent");
    }
    case kTypeUnlink: {
      const auto& r = static_cast<const v1::Unlink&>(m);
      return CheckEntry(r.parent(), r.name(), why);
    }
    case kTypeRmdir: {
      const auto& r = static_cast<const v1::Rmdir&>(m);
      return CheckEntry(r.parent(), r.name(), why);
    }
    case kTypeRename: {
      const auto& r = static_cast<const v1::Rename&>(m);
      ARCHIL_CHECK(CheckEntry(r.parent(), r.name(), why));
      ARCHIL_CHECK(CheckEntry(r.new_parent(), r.new_name(), why, "new_parent"));
      if (r.flags() != 0 && r.flags() != kRenameNoReplace && r.flags() != kRenameExchange) {
        return Fail(WireStatus::kInvalid, "RENAME flags other than NOREPLACE or EXCHANGE", why);
      }
      return WireStatus::kOk;
    }
    case kTypeReadDir: {
      const auto& r = static_cast<const v1::ReadDir&>(m);
      ARCHIL_CHECK(CheckIno(r.dir(), "dir", why));
      if (r.max_entries() == 0 || r.max_entries() > kReadDirMaxEntries) {
        return Fail(WireStatus::kInvalid, "READDIR max_entries outside 1..4096", why);
      }
      return WireStatus::kOk;
    }
    case kTypeOpen:
      return CheckIno(static_cast<const v1::Open&>(m).ino(), "ino", why);
    case kTypeRelease:
      return CheckIno(static_cast<const v1::Release&>(m).ino(), "ino", why);
    default:
      return WireStatus::kOk;
  }
}

WireStatus Data(const FrameHeader& h, const Message& m, std::string_view payload,
                const ValidationContext& ctx, std::string* why) {
  switch (h.type) {
    case kTypeRead: {
      const auto& r = static_cast<const v1::Read&>(m);
      ARCHIL_CHECK(CheckIno(r.ino(), "ino", why));
      ARCHIL_CHECK(CheckRange(r.offset(), r.length(), why));
      if (r.length() > ctx.limits.max_payload) {
        return Fail(WireStatus::kInvalid, "READ longer than the negotiated max_payload", why);
      }
      return WireStatus::kOk;
    }
    case kTypeWrite: {
      const auto& r = static_cast<const v1::Write&>(m);
      ARCHIL_CHECK(CheckIno(r.ino(), "ino", why));
      if (payload.empty()) return Fail(WireStatus::kInvalid, "WRITE without data", why);
      ARCHIL_CHECK(CheckRange(r.offset(), payload.size(), why));
      if (Crc32c(payload) != r.crc32c()) {
        return Fail(WireStatus::kChecksumMismatch, "WRITE payload fails its CRC-32C", why);
      }
      return WireStatus::kOk;
    }
    case kTypeFallocate: {
      const auto& r = static_cast<const v1::Fallocate&>(m);
      ARCHIL_CHECK(CheckIno(r.ino(), "ino", why));
      // Linux's order (vfs_fallocate): the range before the mode.
      if (r.length() == 0) return Fail(WireStatus::kInvalid, "fallocate of length 0", why);
      const uint32_t mode = r.mode();
      const bool known = mode == 0 || mode == kFallocKeepSize ||
                         mode == (kFallocPunchHole | kFallocKeepSize) || mode == kFallocZeroRange ||
                         mode == (kFallocZeroRange | kFallocKeepSize);
      if (!known) return Fail(WireStatus::kNotSupported, "fallocate mode not supported", why);
      return CheckRange(r.offset(), r.length(), why);
    }
    case kTypeLseek: {
      const auto& r = static_cast<const v1::Lseek&>(m);
      ARCHIL_CHECK(CheckIno(r.ino(), "ino", why));
      if (r.whence() != 3 && r.whence() != 4) {
        return Fail(WireStatus::kInvalid, "LSEEK whence other than SEEK_DATA or SEEK_HOLE", why);
      }
      return WireStatus::kOk;
    }
    case kTypeGetXattr: {
      const auto& r = static_cast<const v1::GetXattr&>(m);
      ARCHIL_CHECK(CheckIno(r.ino(), "ino", why));
      return CheckXattrName(r.name(), ctx.posix_acl, why);
    }
    case kTypeListXattr:
      return CheckIno(static_cast<const v1::ListXattr&>(m).ino(), "ino", why);
    case kTypeSetXattr: {
      const auto& r = static_cast<const v1::SetXattr&>(m);
      ARCHIL_CHECK(CheckIno(r.ino(), "ino", why));
      ARCHIL_CHECK(CheckXattrName(r.name(), ctx.posix_acl, why));
      if (r.value().size() > kXattrValueMax) {
        return Fail(WireStatus::kTooBig, "xattr value over 65536 bytes", why);
      }
      if (r.flags() != 0 && r.flags() != kXattrCreate && r.flags() != kXattrReplace) {
        return Fail(WireStatus::kInvalid, "SETXATTR flags other than CREATE or REPLACE", why);
      }
      return WireStatus::kOk;
    }
    case kTypeRemoveXattr: {
      const auto& r = static_cast<const v1::RemoveXattr&>(m);
      ARCHIL_CHECK(CheckIno(r.ino(), "ino", why));
      return CheckXattrName(r.name(), ctx.posix_acl, why);
    }
    default:
      return WireStatus::kOk;
  }
}

#undef ARCHIL_CHECK

// The Mut of a mutating request, if the message has one.
const v1::Mut* MutOf(const FrameHeader& h, const Message& m) {
  switch (h.type) {
#define ARCHIL_MUT(code, T) \
  case code:                \
    return static_cast<const v1::T&>(m).has_mut() ? &static_cast<const v1::T&>(m).mut() : nullptr;
    ARCHIL_MUT(kTypeSetAttr, SetAttr)
    ARCHIL_MUT(kTypeCreate, Create)
    ARCHIL_MUT(kTypeMkdir, Mkdir)
    ARCHIL_MUT(kTypeMknod, Mknod)
    ARCHIL_MUT(kTypeSymlink, Symlink)
    ARCHIL_MUT(kTypeLink, Link)
    ARCHIL_MUT(kTypeUnlink, Unlink)
    ARCHIL_MUT(kTypeRmdir, Rmdir)
    ARCHIL_MUT(kTypeRename, Rename)
    ARCHIL_MUT(kTypeOpen, Open)
    ARCHIL_MUT(kTypeRelease, Release)
    ARCHIL_MUT(kTypeWrite, Write)
    ARCHIL_MUT(kTypeFallocate, Fallocate)
    ARCHIL_MUT(kTypePutAttrs, PutAttrs)
    ARCHIL_MUT(kTypeInoGrant, InoGrant)
    ARCHIL_MUT(kTypeSetXattr, SetXattr)
    ARCHIL_MUT(kTypeRemoveXattr, RemoveXattr)
    ARCHIL_MUT(kTypeCheckpointCreate, CheckpointCreate)
    ARCHIL_MUT(kTypeLock, Lock)
    ARCHIL_MUT(kTypeLockCancel, LockCancel)
    ARCHIL_MUT(kTypeDelegAcquire, DelegAcquire)
    ARCHIL_MUT(kTypeDelegReturn, DelegReturn)
#undef ARCHIL_MUT
    default:
      return nullptr;
  }
}

}  // namespace

WireStatus CheckName(std::string_view name, std::string* why) {
  if (name.empty() || name == "." || name == ".." ||
      name.find_first_of(std::string_view("/\0", 2)) != std::string_view::npos) {
    return Fail(WireStatus::kInvalid, "a name that is empty, . or .., or holds / or NUL", why);
  }
  if (name.size() > kNameMax) {
    return Fail(WireStatus::kNameTooLong, "a name of " + std::to_string(name.size()) + " bytes",
                why);
  }
  return WireStatus::kOk;
}

bool CarriesPuts(const v1::Mut& mut) {
  return mut.puts_size() > 0 || mut.writes_size() > 0 || mut.creates_size() > 0 ||
         mut.removes_size() > 0;
}

WireStatus ValidatePuts(const v1::Mut& mut, std::string* why) {
  // At most `max` puts of a kind in one request.
  auto count = [&](int n, size_t max, const char* kind) {
    if (static_cast<size_t>(n) <= max) return WireStatus::kOk;
    return Fail(WireStatus::kInvalid,
                std::to_string(n) + " " + kind + " puts, over " + std::to_string(max), why);
  };
  if (WireStatus s = count(mut.puts_size(), kMaxAttrPuts, "attribute"); s != WireStatus::kOk) {
    return s;
  }
  for (const v1::AttrPut& p : mut.puts()) {
    if (WireStatus s = CheckIno(p.ino(), "put ino", why); s != WireStatus::kOk) return s;
    if ((p.valid() & ~kAttrPutBits) != 0) {
      return Fail(WireStatus::kInvalid, "unknown attribute put valid bits", why);
    }
    if (p.mode() > 07777) return Fail(WireStatus::kInvalid, "put mode beyond 07777", why);
  }
  if (WireStatus s = count(mut.creates_size(), kMaxCreatePuts, "create"); s != WireStatus::kOk) {
    return s;
  }
  for (const v1::CreatePut& c : mut.creates()) {
    if (WireStatus s = CheckEntry(c.parent(), c.name(), why); s != WireStatus::kOk) return s;
    if (WireStatus s = CheckIno(c.ino(), "create put ino", why); s != WireStatus::kOk) return s;
    // What MKNOD makes, or a directory (feature DIR_PUTS), with no device number.
    const bool dir =
        (c.mode() & S_IFMT) == S_IFDIR && (c.mode() & ~(S_IFMT | 07777)) == 0 && c.rdev() == 0;
    if (!MknodMakes(c.mode()) && !dir) {
      return Fail(WireStatus::kInvalid, "a create put of an unsupported type or mode", why);
    }
  }
  if (WireStatus s = count(mut.removes_size(), kMaxRemovePuts, "remove"); s != WireStatus::kOk) {
    return s;
  }
  for (const v1::RemovePut& r : mut.removes()) {
    if (WireStatus s = CheckEntry(r.parent(), r.name(), why); s != WireStatus::kOk) return s;
    if (WireStatus s = CheckIno(r.ino(), "remove put ino", why); s != WireStatus::kOk) return s;
  }
  if (WireStatus s = count(mut.writes_size(), kMaxWritePuts, "write"); s != WireStatus::kOk) {
    return s;
  }
  size_t bytes = 0;
  for (const v1::WritePut& w : mut.writes()) {
    if (WireStatus s = CheckIno(w.ino(), "write put ino", why); s != WireStatus::kOk) return s;
    if (w.data().empty()) return Fail(WireStatus::kInvalid, "a write put without data", why);
    bytes += w.data().size();
    if (bytes > kMaxWritePutBytes) {
      return Fail(WireStatus::kInvalid,
                  "write puts over " + std::to_string(kMaxWritePutBytes) + " bytes", why);
    }
    if (WireStatus s = CheckRange(w.offset(), w.data().size(), why); s != WireStatus::kOk) {
      return s;
    }
    if (Crc32c(w.data()) != w.crc32c()) {
      return Fail(WireStatus::kChecksumMismatch, "a write put fails its CRC-32C", why);
    }
  }
  return WireStatus::kOk;
}

WireStatus ValidateRequest(const FrameHeader& h, const Message& m, std::string_view payload,
                           const ValidationContext& ctx, std::string* why) {
  const MessageType* type = FindMessageType(h.type);
  if (type == nullptr) return Fail(WireStatus::kUnsupportedType, "unknown message type", why);
  const v1::Mut* mut = type->mutating ? MutOf(h, m) : nullptr;
  if (type->mutating && mut == nullptr) {
    return Fail(WireStatus::kInvalid, std::string(type->name) + " without its Mut", why);
  }
  if (mut != nullptr && CarriesPuts(*mut)) {
    if (WireStatus s = ValidatePuts(*mut, why); s != WireStatus::kOk) return s;
  }
  if (WireStatus s = Namespace(h, m, why); s != WireStatus::kOk) return s;
  return Data(h, m, payload, ctx, why);
}

}  // namespace archil::proto
