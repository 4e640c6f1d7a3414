#include "base/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace archil {
namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // reflected Castagnoli polynomial

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = MakeTable();

// The raw register update, without the initial/final inversion.
uint32_t UpdatePortable(uint32_t state, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) state = kTable[(state ^ p[i]) & 0xFF] ^ (state >> 8);
  return state;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t UpdateHardware(uint32_t state, const uint8_t* p,
                                                          size_t n) {
  uint64_t s = state;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    s = _mm_crc32_u64(s, v);
    p += 8;
    n -= 8;
  }
  auto s32 = static_cast<uint32_t>(s);
  while (n > 0) {
    s32 = _mm_crc32_u8(s32, *p++);
    --n;
  }
  return s32;
}

bool DetectSse42() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_SSE4_2) != 0;
}
#endif

using UpdateFn = uint32_t (*)(uint32_t, const uint8_t*, size_t);

UpdateFn ChooseUpdate() {
#if defined(__x86_64__)
  if (DetectSse42()) return UpdateHardware;
#endif
  return UpdatePortable;
}

const UpdateFn kUpdate = ChooseUpdate();

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n) {
  return ~kUpdate(~crc, static_cast<const uint8_t*>(data), n);
}

uint32_t Crc32c(const void* data, size_t n) { return Crc32cExtend(0, data, n); }

uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t n) {
  return ~UpdatePortable(~crc, static_cast<const uint8_t*>(data), n);
}

bool Crc32cIsHardware() { return kUpdate != UpdatePortable; }

}  // namespace archil
