#include "engine/records/segusage_record.h"

#include <bit>
#include <cstring>

#include "engine/records/field_codec.h"
#include "engine/records/record_util.h"

namespace archil::engine {
namespace {

// The layouts of formats.md §4.10, one line per field.
// clang-format off

// This header, then the bitmap (its size follows from max_blocks).
constexpr auto kSegUsageLayout = Layout<SegUsageRecord>(
    Fmt(),
    Reserved(3),
    Field(&SegUsageRecord::max_blocks),
    Field(&SegUsageRecord::live_blocks),
    Reserved(4));

// The SegUsageMerge operand (12 bytes). DecodeSegUsageOp checks the op, with a message of its own.
constexpr auto kSegUsageOpLayout = Layout<SegUsageOp>(
    UncheckedEnum(&SegUsageOp::op),
    Reserved(3),
    Field(&SegUsageOp::start_blk),
    Field(&SegUsageOp::nblk));
static_assert(kSegUsageOpLayout.size() == 12);
// clang-format on

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
  std::string v = kSegUsageLayout.Encode(r);
  v.append(r.bitmap);
  return v;
}

Result<SegUsageRecord> DecodeSegUsage(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt("segusage", "segusage", v));
  if (v.size() < kSegUsageLayout.size()) return BadLength("segusage", v.size(), "16 + bitmap");
  SegUsageRecord r;
  ARCHIL_RETURN_IF_ERROR(kSegUsageLayout.Get("segusage", v, &r));
  const size_t want = kSegUsageLayout.size() + SegUsageBitmapSize(r.max_blocks);
  if (v.size() != want) return BadLength("segusage", v.size(), std::to_string(want));
  r.bitmap.assign(v.substr(kSegUsageLayout.size()));
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

std::string EncodeSegUsageOp(const SegUsageOp& op) { return kSegUsageOpLayout.Encode(op); }

Result<SegUsageOp> DecodeSegUsageOp(std::string_view v) {
  ARCHIL_ASSIGN_OR_RETURN(SegUsageOp op, kSegUsageOpLayout.DecodeExact("SegUsageMerge operand", v));
  if (op.op != SegUsageOpType::kSet && op.op != SegUsageOpType::kClear) {
    return Status::Corruption("SegUsageMerge operand: unknown op " +
                              std::to_string(static_cast<unsigned>(op.op)));
  }
  return op;
}

}  // namespace archil::engine
