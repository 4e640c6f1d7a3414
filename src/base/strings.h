// Small string helpers with no dependencies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archil {

// Lower-case hex of every byte.
std::string HexEncode(std::string_view bytes);
// RFC 4648 §4 base64, with '=' padding (what HTTP headers such as S3's checksums carry).
std::string Base64Encode(std::string_view bytes);
// True if `s` is exactly `n` lower-case hex digits.
bool IsLowerHex(std::string_view s, size_t n);
// Parses exactly `n` (at most 16) lower-case hex digits, as zero-padded object names hold them.
std::optional<uint64_t> ParseLowerHex(std::string_view s, size_t n);
// Splits on `sep`; keeps empty pieces.
std::vector<std::string_view> Split(std::string_view s, char sep);
// Parses a base-10 unsigned integer with no sign, spaces or overflow.
std::optional<uint64_t> ParseUint64(std::string_view s);
// True if `s` is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool IsValidUtf8(std::string_view s);

}  // namespace archil
