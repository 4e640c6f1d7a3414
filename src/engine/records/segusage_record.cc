#include "engine/records/segusage_record.h"

#include <bit>
#include <cstring>

#include "engine/records/record_util.h"

namespace archil::engine {
namespace {

// Set bits of `bitmap`, eight bytes at a time (a segment's bitmap is 2 KiB: this runs on every
// decode, which the merge operator does on every read of a record with operands).
uint64_t CountSetBits(std::string_view bitmap) {
  uint64_t n = 0;
  size_t i = 0;
  for (; i + 8 <= bitmap.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bitmap.data() + i, 8);
    n += static_cast<uint64_t>(std::popcount(word));
  }
  for (; i < bitmap.size(); ++i)
    n += static_cast<uint64_t>(std::popcount(static_cast<uint8_t>(bitmap[i])));
  return n;
}

}  // namespace

SegUsageRecord SegUsageRecord::Empty(uint32_t max_blocks) {
  return SegUsageRecord{max_blocks, 0, std::string(SegUsageBitmapSize(max_blocks), '\0')};
}

std::string EncodeSegUsage(const SegUsageRecord& r) {
  std::string v(1, static_cast<char>(kValueFmt));
  PutZeros(&v, 3);
  PutFixed32LE(&v, r.max_blocks);
  PutFixed32LE(&v, r.live_blocks);
  PutZeros(&v, 4);
  v.append(r.bitmap);
  return v;
}

Result<SegUsageRecord> DecodeSegUsage(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt("segusage", "segusage", v));
  if (v.size() < 16) return BadLength("segusage", v.size(), "16 + bitmap");
  SegUsageRecord r;
  r.max_blocks = U32(v, 4);
  r.live_blocks = U32(v, 8);
  const size_t want = 16 + SegUsageBitmapSize(r.max_blocks);
  if (v.size() != want) return BadLength("segusage", v.size(), std::to_string(want));
  r.bitmap.assign(v.substr(16));
  if (r.bitmap[0] & 1) return Status::Corruption("segusage: header block 0 marked live");
  const unsigned used_in_last = (r.max_blocks + 1) % 8;  // bits of the last byte in use
  if (used_in_last != 0 && (static_cast<uint8_t>(r.bitmap.back()) >> used_in_last) != 0) {
    return Status::Corruption("segusage: bits set past max_blocks");
  }
  if (const uint64_t live = CountSetBits(r.bitmap); live != r.live_blocks) {
    return Status::Corruption("segusage: live_blocks " + std::to_string(r.live_blocks) + " but " +
                              std::to_string(live) + " bits set");
  }
  return r;
}

std::string EncodeSegUsageOp(const SegUsageOp& op) {
  std::string v(1, static_cast<char>(op.op));
  PutZeros(&v, 3);
  PutFixed32LE(&v, op.start_blk);
  PutFixed32LE(&v, op.nblk);
  return v;
}

Result<SegUsageOp> DecodeSegUsageOp(std::string_view v) {
  if (v.size() != 12) return BadLength("SegUsageMerge operand", v.size(), "12");
  const uint8_t op = U8(v, 0);
  if (op < 1 || op > 2) {
    return Status::Corruption("SegUsageMerge operand: unknown op " + std::to_string(op));
  }
  return SegUsageOp{static_cast<SegUsageOpType>(op), U32(v, 4), U32(v, 8)};
}

}  // namespace archil::engine
