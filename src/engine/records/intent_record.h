// Values of the local, unlogged bookkeeping CFs: the `intent` CF's inline write (formats.md §4.6)
// and the `dead` CF's value (§4.9, just fmt: the key says everything).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace archil::engine {

// An intent: the bytes of a small write, replayed into its segment at start.
struct IntentRecord {
  std::vector<uint32_t> crcs;  // CRC32C of each block; size() == nblk
  std::string data;            // nblk * 4096 bytes
  bool operator==(const IntentRecord&) const = default;
};
// Largest intent: writes of <= 64 KiB ride as intents, but an unaligned one touches 17 blocks and
// the read-modify-write of edge blocks adds to it; the format bounds nblk only by a chunk.
inline constexpr uint32_t kMaxIntentBlocks = 256;
// Builds the record for `data` (REQUIRES: a whole number of blocks, 1..kMaxIntentBlocks).
IntentRecord MakeIntent(std::string data);
// REQUIRES: crcs.size() * 4096 == data.size().
std::string EncodeIntent(const IntentRecord& r);
// The number of blocks an intent holds, with its fmt and length checked but not its CRCs (for
// scans that only need the extent, such as intent truncation).
Result<uint32_t> IntentBlocks(std::string_view v);
// Strict: fmt, nblk in 1..256, exact length, and every block matches its CRC.
Result<IntentRecord> DecodeIntent(std::string_view v);

// The `dead` CF value: fmt u8 only.
std::string EncodeDeadValue();
Status DecodeDeadValue(std::string_view v);

}  // namespace archil::engine
