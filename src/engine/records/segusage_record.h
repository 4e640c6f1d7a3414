// The `segusage` CF's value (formats.md §4.10): the liveness bitmap of one segment of this disk,
// and the SegUsageMerge operand (SET / CLEAR a block range). The merge semantics live in
// chunk_map.h (ApplySegUsageOp).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace archil::engine {

struct SegUsageRecord {
  uint32_t max_blocks = 0;   // data capacity; blocks 1..max_blocks can be live
  uint32_t live_blocks = 0;  // number of set bits
  // ceil((max_blocks + 1) / 8) bytes; bit i (LSB first) = block i live. Bit 0 (the header) and the
  // padding bits past max_blocks are never set.
  std::string bitmap;
  bool operator==(const SegUsageRecord&) const = default;

  // All bits clear.
  static SegUsageRecord Empty(uint32_t max_blocks);
  bool live(uint32_t blk) const {
    return blk <= max_blocks && (static_cast<uint8_t>(bitmap[blk / 8]) >> (blk % 8)) & 1;
  }
};
inline size_t SegUsageBitmapSize(uint32_t max_blocks) { return (uint64_t{max_blocks} + 8) / 8; }

// REQUIRES: bitmap.size() == SegUsageBitmapSize(max_blocks).
std::string EncodeSegUsage(const SegUsageRecord& r);
// Strict: fmt, exact length for max_blocks, bit 0 and padding clear, live_blocks == popcount.
Result<SegUsageRecord> DecodeSegUsage(std::string_view v);

enum class SegUsageOpType : uint8_t { kSet = 1, kClear = 2 };
struct SegUsageOp {  // 12 bytes; no fmt byte (an operand, identified by op)
  SegUsageOpType op = SegUsageOpType::kSet;
  uint32_t start_blk = 0;
  uint32_t nblk = 0;
  bool operator==(const SegUsageOp&) const = default;
};
std::string EncodeSegUsageOp(const SegUsageOp& op);
// Corruption for a wrong length or an unknown op. (Range checks need the segment: see
// ApplySegUsageOp.)
Result<SegUsageOp> DecodeSegUsageOp(std::string_view v);

}  // namespace archil::engine
