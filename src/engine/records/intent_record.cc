#include "engine/records/intent_record.h"

#include "base/crc32c.h"
#include "engine/records/field_codec.h"
#include "engine/records/record_util.h"
#include "engine/types.h"

namespace archil::engine {

namespace {

// formats.md §4.6, one line per field: this header, then nblk CRCs of 4 bytes, then nblk blocks
// of data.
// clang-format off
constexpr auto kIntentLayout = Layout<IntentRecord>(
    Fmt(),
    Reserved(3),
    Count32(&IntentRecord::crcs));
// clang-format on

}  // namespace

IntentRecord MakeIntent(std::string data) {
  IntentRecord r;
  for (size_t off = 0; off + kBlockSize <= data.size(); off += kBlockSize) {
    r.crcs.push_back(Crc32c(data.data() + off, kBlockSize));
  }
  r.data = std::move(data);
  return r;
}

std::string EncodeIntent(const IntentRecord& r) {
  std::string v;
  v.reserve(kIntentLayout.size() + 4 * r.crcs.size() + r.data.size());
  kIntentLayout.Put(&v, r);
  for (uint32_t crc : r.crcs) PutFixed32LE(&v, crc);
  v.append(r.data);
  return v;
}

Result<uint32_t> IntentBlocks(std::string_view v) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt("intent", "intent", v));
  if (v.size() < kIntentLayout.size()) return BadLength("intent", v.size(), "8 + 4100 * nblk");
  const size_t n = kIntentLayout.CountIn(v);
  if (n < 1 || n > kMaxIntentBlocks) {
    return Status::Corruption("intent record: nblk " + std::to_string(n));
  }
  const size_t want = kIntentLayout.size() + n * (4 + kBlockSize);
  if (v.size() != want) return BadLength("intent", v.size(), std::to_string(want));
  return static_cast<uint32_t>(n);
}

Result<IntentRecord> DecodeIntent(std::string_view v) {
  ARCHIL_ASSIGN_OR_RETURN(const uint32_t n, IntentBlocks(v));
  IntentRecord r;
  r.crcs.resize(n);
  for (size_t i = 0; i < n; ++i) r.crcs[i] = U32(v, kIntentLayout.size() + 4 * i);
  r.data.assign(v.substr(kIntentLayout.size() + 4 * size_t{n}));
  for (size_t i = 0; i < n; ++i) {
    if (Crc32c(r.data.data() + i * kBlockSize, kBlockSize) != r.crcs[i]) {
      return Status::Corruption("intent record: block " + std::to_string(i) + " fails its CRC");
    }
  }
  return r;
}

std::string EncodeDeadValue() { return std::string(1, static_cast<char>(kValueFmt)); }

// Just the fmt byte: no fields to declare.
Status DecodeDeadValue(std::string_view v) { return CheckFixed("dead", "dead", v, 1); }

}  // namespace archil::engine
