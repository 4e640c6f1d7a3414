// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed 64-bit
// hash. With a secret key, an adversary who chooses the inputs cannot make them collide on
// purpose; the engine uses it for directory cookies (docs/formats.md §4.3).
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace archil {

using SipHashKey = std::array<uint8_t, 16>;

// SipHash-2-4 of `n` bytes at `data` under `key` (k0 = key[0..8) and k1 = key[8..16), both read
// little-endian, as in the reference implementation).
uint64_t SipHash24(const SipHashKey& key, const void* data, size_t n);
inline uint64_t SipHash24(const SipHashKey& key, std::string_view s) {
  return SipHash24(key, s.data(), s.size());
}

}  // namespace archil
