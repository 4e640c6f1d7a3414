// The frame that log objects (formats.md §8.2) and snapshot parts (§8.4) share: an 8-byte magic,
// fmt u16 = 1 and rsv u16 = 0 at offset 8, a fixed header whose last 4 bytes are the CRC-32C of
// the bytes before them; then the body; then a 16-byte trailer: the total length u32, the
// CRC-32C of every byte before it u32, an 8-byte end magic.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace archil::tier {

inline constexpr size_t kFrameTrailer = 16;

// OK if `v` is such a frame with a header of `header_size` bytes; else Corruption, "<what>: ..."
// naming the first thing wrong (length, magics, CRCs, fmt, reserved bytes).
Status CheckFrame(std::string_view v, std::string_view magic, std::string_view end_magic,
                  size_t header_size, std::string_view what);
// Sets the header CRC of `v` (whose first `header_size` bytes are the header) and appends the
// trailer.
void FinishFrame(std::string* v, size_t header_size, std::string_view end_magic);

}  // namespace archil::tier
