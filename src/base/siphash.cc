#include "base/siphash.h"

#include <cstring>

#include "base/coding.h"

namespace archil {
namespace {

inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline void Round(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
  v0 += v1;
  v1 = Rotl(v1, 13);
  v1 ^= v0;
  v0 = Rotl(v0, 32);
  v2 += v3;
  v3 = Rotl(v3, 16);
  v3 ^= v2;
  v0 += v3;
  v3 = Rotl(v3, 21);
  v3 ^= v0;
  v2 += v1;
  v1 = Rotl(v1, 17);
  v1 ^= v2;
  v2 = Rotl(v2, 32);
}

}  // namespace

uint64_t SipHash24(const SipHashKey& key, const void* data, size_t n) {
  const char* k = reinterpret_cast<const char*>(key.data());
  const uint64_t k0 = DecodeFixed64LE(k);
  const uint64_t k1 = DecodeFixed64LE(k + 8);
  uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
  uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
  uint64_t v3 = 0x7465646279746573ULL ^ k1;

  const char* p = static_cast<const char*>(data);
  const size_t whole = n - n % 8;
  for (size_t i = 0; i < whole; i += 8) {
    const uint64_t m = DecodeFixed64LE(p + i);
    v3 ^= m;
    Round(v0, v1, v2, v3);
    Round(v0, v1, v2, v3);
    v0 ^= m;
  }
  // Last block: the remaining bytes, little-endian, with the length's low byte on top.
  uint64_t b = static_cast<uint64_t>(n) << 56;
  for (size_t i = 0; i < n % 8; ++i) {
    b |= static_cast<uint64_t>(static_cast<uint8_t>(p[whole + i])) << (8 * i);
  }
  v3 ^= b;
  Round(v0, v1, v2, v3);
  Round(v0, v1, v2, v3);
  v0 ^= b;

  v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) Round(v0, v1, v2, v3);
  return v0 ^ v1 ^ v2 ^ v3;
}

}  // namespace archil
