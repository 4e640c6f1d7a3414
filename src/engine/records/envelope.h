// The envelope that starts every value of a versioned CF (inode, dentry, xattr, chunk; formats.md
// §4): fmt u8 = 1, kind u8 (VALUE / WHITEOUT), flags u16, birth u64, then the body. A WHITEOUT
// has an empty body.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/types.h"

namespace archil::engine {

inline constexpr uint8_t kValueFmt = 1;  // the one `fmt` every value starts with, today
inline constexpr size_t kEnvelopeSize = 12;

enum class ValueKind : uint8_t { kValue = 0, kWhiteout = 1 };

struct Envelope {
  ValueKind kind = ValueKind::kValue;
  uint16_t flags = 0;  // formats.md: "flags, 0". No flag is defined yet; kept as read
  Epoch birth;
  bool operator==(const Envelope&) const = default;
};

// A decoded value of a versioned CF. For a WHITEOUT, `body` is default-constructed.
template <typename T>
struct Versioned {
  Envelope env;
  T body{};
  bool operator==(const Versioned&) const = default;
};

void PutEnvelope(std::string* dst, const Envelope& env);
// The 12 bytes of a WHITEOUT born in `birth`: a whole value.
std::string EncodeWhiteout(Epoch birth);

// Splits a versioned value of CF `cf` into envelope and body. Corruption for an unknown fmt
// ("<cf> fmt N unsupported"), an unknown kind, fewer than 12 bytes, or a WHITEOUT with a body.
Result<Envelope> DecodeEnvelope(std::string_view cf, std::string_view value,
                                std::string_view* body);

}  // namespace archil::engine
