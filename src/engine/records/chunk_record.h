// The `chunk` CF's value (formats.md §4.5): an extent map of one 1 MiB chunk (envelope, header,
// extents with one CRC32C per 4 KiB block), and the ChunkMerge operand (WRITE / CLIP / PUNCH).
// The merge semantics live in chunk_map.h.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/records/envelope.h"
#include "engine/types.h"

namespace archil::engine {

// A run of blocks of a chunk stored contiguously in one segment.
struct Extent {
  uint16_t blk_off = 0;  // first block within the chunk (0..255)
  uint16_t nblk = 0;     // 1..256, blk_off + nblk <= 256
  uint32_t seg_blk = 0;  // >= 1 (block 0 is the segment header)
  DiskNo seg_disk;
  SegNo seg_no;
  Epoch birth;  // epoch in which these bytes were written
  uint16_t flags = 0;
  std::vector<uint32_t> crcs;  // CRC32C of each block; size() == nblk
  uint32_t end() const { return uint32_t{blk_off} + nblk; }
  bool operator==(const Extent&) const = default;
};
inline constexpr size_t kExtentHeaderSize = 36;
inline size_t ExtentSize(const Extent& e) { return kExtentHeaderSize + 4 * e.crcs.size(); }

// Corruption unless `e` is well formed on its own: nblk in 1..256, within the chunk, seg_blk >= 1
// with no u32 overflow, crcs.size() == nblk.
Status CheckExtent(const Extent& e);

struct ChunkRecord {
  uint32_t tgen = 0;            // inode's tgen when this chunk was last modified
  std::vector<Extent> extents;  // sorted by blk_off, non-overlapping
  bool operator==(const ChunkRecord&) const = default;
};
// Corruption unless every extent passes CheckExtent and they are sorted and disjoint.
Status CheckChunk(const ChunkRecord& c);

// REQUIRES: CheckChunk(c).ok().
std::string EncodeChunk(const Envelope& env, const ChunkRecord& c);
// Strict: the header's n_ext must match the extents exactly, no trailing bytes, CheckChunk holds.
Result<Versioned<ChunkRecord>> DecodeChunk(std::string_view v);

// The ChunkMerge operand (formats.md §4.5 gives it no fmt byte; `op` identifies it, so a
// future layout needs new op codes). Reserved bytes are written as zero and ignored.
enum class ChunkOpType : uint8_t { kWrite = 1, kClip = 2, kPunch = 3 };
struct ChunkOp {
  ChunkOpType op = ChunkOpType::kWrite;
  Epoch birth;              // sets the result's envelope birth
  uint32_t tgen = 0;        // result header tgen = max(old, this)
  Extent extent;            // kWrite
  uint16_t keep_blk = 0;    // kClip: drop blocks >= keep_blk (0..256)
  uint16_t punch_off = 0;   // kPunch
  uint16_t punch_nblk = 0;  // kPunch
  bool operator==(const ChunkOp&) const = default;
};
// REQUIRES: for kWrite, CheckExtent(op.extent).ok().
std::string EncodeChunkOp(const ChunkOp& op);
// Corruption for an unknown op, a wrong length, an invalid extent, keep_blk > 256, or a punch
// range that is empty or leaves the chunk.
Result<ChunkOp> DecodeChunkOp(std::string_view v);

}  // namespace archil::engine
