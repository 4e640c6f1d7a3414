// Test-only helpers: a seeded generator for randomized tests. The seed is fixed unless
// ARCHIL_TEST_SEED is set (to replay a failure); tests print it with SCOPED_TRACE.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include "base/status.h"
#include "engine/types.h"

namespace archil::engine::testing {

inline uint64_t TestSeed() {
  const char* env = std::getenv("ARCHIL_TEST_SEED");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 20261130;
}

// The errno a failed call carries (0 for success), for EXPECT_EQ(Err(fs->Lookup(...)), ENOENT).
inline int Err(const Status& s) { return ErrnoFor(s); }
template <typename T>
int Err(const Result<T>& r) {
  return ErrnoFor(r.status());
}

inline std::string SeedTrace(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay with ARCHIL_TEST_SEED=" + std::to_string(seed) +
         ")";
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  uint64_t U64() { return gen_(); }
  uint32_t U32() { return static_cast<uint32_t>(gen_()); }
  uint16_t U16() { return static_cast<uint16_t>(gen_()); }
  uint8_t U8() { return static_cast<uint8_t>(gen_()); }
  int64_t I64() { return static_cast<int64_t>(gen_()); }
  // Uniform in [lo, hi].
  uint64_t Range(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(gen_);
  }
  bool Bool() { return gen_() & 1; }
  std::string Bytes(size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(gen_());
    return s;
  }
  // A valid file name: 1..max bytes of [a-z] (some names share prefixes, for ordering tests).
  std::string Name(size_t max = 12) {
    std::string s(Range(1, max), 'a');
    for (char& c : s) c = static_cast<char>('a' + Range(0, 3));
    return s;
  }
  template <size_t N>
  std::array<uint8_t, N> Array() {
    std::array<uint8_t, N> a;
    for (auto& b : a) b = U8();
    return a;
  }
  DiskNo Disk() { return DiskNo(Range(1, UINT64_MAX - 1)); }

 private:
  std::mt19937_64 gen_;
};

}  // namespace archil::engine::testing
