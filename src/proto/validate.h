// The checks of a request that need no disk state (docs/protocol.md §12 row 12, and the rules of
// §5.3-5.5): names, symlink targets, flags and modes, offsets and lengths, payload size and CRC,
// xattr names and values, and that every mutating request carries its Mut. What needs the disk
// (does the parent exist, is it a directory, ...) is the engine's to answer. A request that fails
// here changes nothing, and the connection stays.
//
// Thread-safety: pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/messages.h"
#include "proto/wire_status.h"

namespace archil::proto {

inline constexpr size_t kNameMax = 255;          // bytes of a file name
inline constexpr size_t kSymlinkMax = 4095;      // bytes of a symlink target
inline constexpr size_t kXattrNameMax = 255;     // bytes of an xattr name
inline constexpr size_t kXattrValueMax = 65536;  // bytes of an xattr value
inline constexpr uint32_t kReadDirMaxEntries = 4096;
inline constexpr uint64_t kMaxFileEnd = (uint64_t{1} << 63) - 1;  // offset + length at most
inline constexpr size_t kMaxAttrPuts = 1024;                      // Mut.puts per request (§5.3.2)
inline constexpr size_t kMaxWritePuts = 64;             // Mut.writes per request (§5.3.2)
inline constexpr size_t kMaxWritePutBytes = 128 << 10;  // their data, in all
inline constexpr size_t kMaxCreatePuts = 256;           // Mut.creates per request (§5.3.2)
inline constexpr size_t kMaxRemovePuts = 256;           // Mut.removes per request (§5.3.2)
inline constexpr uint32_t kMaxInoGrant = 1 << 16;       // INO_GRANT.count at most (§5.3.3)

struct ValidationContext {
  FrameLimits limits = kDefaultLimits;  // the connection's negotiated limits
  bool posix_acl = false;               // the POSIX_ACL feature was negotiated
};

// Checks request `m` of type `h.type` (as ParseBody made it) with its payload. Returns kOk, or the
// status to answer with and a one-line reason in *why (for the ErrorReply and the log; never the
// name bytes themselves unescaped).
WireStatus ValidateRequest(const FrameHeader& h, const Message& m, std::string_view payload,
                           const ValidationContext& ctx, std::string* why);

// The attribute and write puts a Mut carries (§5.3.2): at most kMaxAttrPuts attribute puts, each
// naming an inode, with valid bits among MODE, UID, GID, ATIME, MTIME and a mode <= 07777; at most
// kMaxWritePuts writes of kMaxWritePutBytes in all, each naming an inode, not empty, ending within
// the maximum file size, its CRC-32C matching; at most kMaxCreatePuts creates, each naming a
// parent and a number, with a valid name and a mode of a file, FIFO, socket or device; at most
// kMaxRemovePuts removes, each naming a parent and an inode, with a valid name.
// kInvalid (kChecksumMismatch for a CRC, kNameTooLong for a long name) otherwise.
// ValidateRequest checks them too; this tells a request refused for its puts from one refused for
// itself.
WireStatus ValidatePuts(const v1::Mut& mut, std::string* why);
// Whether `mut` carries puts of any kind (attributes, writes, creates, removes).
bool CarriesPuts(const v1::Mut& mut);

// One file name (§5.3): kInvalid if empty, "." or "..", or it holds '/' or NUL; kNameTooLong over
// kNameMax bytes.
WireStatus CheckName(std::string_view name, std::string* why);

}  // namespace archil::proto
