// The engine's vocabulary: strong integer types for what keys and values hold, inode-number
// layout, and the format's fixed sizes (docs/formats.md §1).
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/ids.h"
#include "base/status.h"
#include "posix/types.h"

namespace archil::engine {

struct EpochTag {};
struct SegNoTag {};
struct SeqTag {};
struct DiskNoTag {};

// Inode number (also the FUSE node id): lineage index in bits 63..40, counter in bits 39..0. The
// same type as the file-system interface's.
using Ino = posix::Ino;
// Per-disk epoch, starting at 1. 0 means "none" (a root's fork_epoch, a PENDING checkpoint).
using Epoch = StrongInt<EpochTag>;
// Segment number: owner_gen << 32 | n.
using SegNo = StrongInt<SegNoTag>;
// Per-disk log sequence number.
using Seq = StrongInt<SeqTag>;
// The u64 behind a disk id ("dsk-" + 16 hex digits). Keys store this. 0 is invalid (no disk).
using DiskNo = StrongInt<DiskNoTag>;

// DiskId text <-> DiskNo. InvalidArgument for an empty id or for "dsk-0000000000000000".
Result<DiskNo> DiskNoFromId(const DiskId& id);
// The same from text ("dsk-…"), as object names hold it: InvalidArgument if it is not a disk id.
Result<DiskNo> DiskNoFromText(std::string_view text);
// REQUIRES: disk.value() != 0.
DiskId DiskIdFromNo(DiskNo disk);

// Sizes.
inline constexpr uint32_t kBlockSize = 4096;
inline constexpr uint32_t kChunkBlocks = 256;  // 1 MiB chunks
inline constexpr uint32_t kChunkShift = 20;    // chunk index = file offset >> 20
inline constexpr size_t kMaxFileName = 255;
inline constexpr size_t kMaxXattrName = 255;
inline constexpr size_t kMaxXattrValue = 65536;
inline constexpr size_t kMaxSymlinkTarget = 4095;

// Inode numbers.
inline constexpr int kInoCounterBits = 40;
inline constexpr uint64_t kInoCounterMask = (uint64_t{1} << kInoCounterBits) - 1;
inline constexpr uint32_t kMaxLineageIndex = (uint32_t{1} << 24) - 1;
inline constexpr Ino kRootIno{1};
inline constexpr uint64_t kFirstInoCounter = 16;  // counters 0..15 are reserved

// REQUIRES: lineage_index <= kMaxLineageIndex, counter <= kInoCounterMask.
constexpr Ino MakeIno(uint32_t lineage_index, uint64_t counter) {
  return Ino((uint64_t{lineage_index} << kInoCounterBits) | counter);
}
constexpr uint32_t LineageIndexOf(Ino ino) {
  return static_cast<uint32_t>(ino.value() >> kInoCounterBits);
}
constexpr uint64_t CounterOf(Ino ino) { return ino.value() & kInoCounterMask; }

// Segment numbers.
constexpr SegNo MakeSegNo(uint32_t owner_gen, uint32_t n) {
  return SegNo((uint64_t{owner_gen} << 32) | n);
}
constexpr uint32_t OwnerGenOf(SegNo s) { return static_cast<uint32_t>(s.value() >> 32); }

// Names (formats.md §1): file names 1..255 bytes without '/' or NUL; xattr names 1..255 bytes
// without NUL.
bool IsValidFileName(std::string_view name);
bool IsValidXattrName(std::string_view name);

}  // namespace archil::engine
