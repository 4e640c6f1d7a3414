// Internal helpers shared by the record codecs: fmt and length checks with the messages
// formats.md §1 prescribes. Not part of the engine's interface.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "base/coding.h"
#include "base/status.h"
#include "engine/records/envelope.h"

namespace archil::engine {

inline Status FmtUnsupported(std::string_view cf, uint8_t fmt) {
  return Status::Corruption(std::string(cf) + " fmt " + std::to_string(fmt) + " unsupported");
}

inline Status BadLength(std::string_view record, size_t got, std::string_view want) {
  return Status::Corruption(std::string(record) + " record: " + std::to_string(got) +
                            " bytes, want " + std::string(want));
}

// Checks the fmt byte of an unversioned value (the first byte). Corruption if empty or unknown.
inline Status CheckFmt(std::string_view cf, std::string_view record, std::string_view value) {
  if (value.empty()) return BadLength(record, 0, "at least 1");
  const uint8_t fmt = static_cast<uint8_t>(value[0]);
  if (fmt != kValueFmt) return FmtUnsupported(cf, fmt);
  return Status::Ok();
}

// CheckFmt plus an exact length.
inline Status CheckFixed(std::string_view cf, std::string_view record, std::string_view value,
                         size_t size) {
  ARCHIL_RETURN_IF_ERROR(CheckFmt(cf, record, value));
  if (value.size() != size) return BadLength(record, value.size(), std::to_string(size));
  return Status::Ok();
}

inline void PutZeros(std::string* dst, size_t n) { dst->append(n, '\0'); }

inline void PutBytes16(std::string* dst, const std::array<uint8_t, 16>& b) {
  dst->append(reinterpret_cast<const char*>(b.data()), b.size());
}

inline std::array<uint8_t, 16> GetBytes16(const char* p) {
  std::array<uint8_t, 16> b;
  for (size_t i = 0; i < 16; ++i) b[i] = static_cast<uint8_t>(p[i]);
  return b;
}

// Little-endian reads at fixed offsets of a value whose length was checked.
inline uint16_t U16(std::string_view v, size_t off) { return DecodeFixed16LE(v.data() + off); }
inline uint32_t U32(std::string_view v, size_t off) { return DecodeFixed32LE(v.data() + off); }
inline uint64_t U64(std::string_view v, size_t off) { return DecodeFixed64LE(v.data() + off); }
inline int64_t I64(std::string_view v, size_t off) { return static_cast<int64_t>(U64(v, off)); }
inline uint8_t U8(std::string_view v, size_t off) { return static_cast<uint8_t>(v[off]); }

inline void PutI64(std::string* dst, int64_t v) { PutFixed64LE(dst, static_cast<uint64_t>(v)); }

inline Status BadEnum(std::string_view record, std::string_view field, unsigned v) {
  return Status::Corruption(std::string(record) + " record: " + std::string(field) + " " +
                            std::to_string(v) + " out of range");
}

// Reads a u16-length string that must end exactly at the end of `v`.
inline Status TailString(std::string_view record, std::string_view v, size_t off,
                         std::string* out) {
  Decoder d(v.substr(off));
  std::string_view s;
  if (!d.GetString16(&s) || d.remaining() != 0) {
    return BadLength(record, v.size(), std::to_string(off) + " + 2 + string length");
  }
  out->assign(s);
  return Status::Ok();
}

}  // namespace archil::engine
