// SetAttr.valid and AttrPut.valid (docs/protocol.md §5.3, §5.3.2): which fields a SETATTR or an
// attribute put sets. The values equal the kernel's FUSE_SET_ATTR_* bits.
#pragma once

#include <cstdint>

namespace archil::proto {

inline constexpr uint32_t kSetMode = 1;
inline constexpr uint32_t kSetUid = 2;
inline constexpr uint32_t kSetGid = 4;
inline constexpr uint32_t kSetSize = 8;
inline constexpr uint32_t kSetAtime = 16;  // to atime_ns
inline constexpr uint32_t kSetMtime = 32;  // to mtime_ns
inline constexpr uint32_t kSetAtimeNow = 128;
inline constexpr uint32_t kSetMtimeNow = 256;
inline constexpr uint32_t kSetCtime = 1024;  // accepted, ignored: the server stamps the ctime

// Every bit a SETATTR may hold.
inline constexpr uint32_t kSetAttrBits = kSetMode | kSetUid | kSetGid | kSetSize | kSetAtime |
                                         kSetMtime | kSetAtimeNow | kSetMtimeNow | kSetCtime;
// Every bit an attribute put may hold: values only (no size, no "now": the client answered them).
inline constexpr uint32_t kAttrPutBits = kSetMode | kSetUid | kSetGid | kSetAtime | kSetMtime;

}  // namespace archil::proto
