// The seed of a randomized test: ARCHIL_TEST_SEED when set, else a fixed default, so that every
// run is reproducible and a failure can be replayed. The seed is printed, so it shows in the
// output of a failed test.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace archil {

inline constexpr unsigned kDefaultTestSeed = 301;

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// How many operations (rounds, power cuts) a randomized test runs: `n` in a plain build, a fifth
// of it under ThreadSanitizer (20-100 times slower, and looking for races between threads, not
// in the count of operations) and half under AddressSanitizer (3-5 times slower; the release
// build runs the full count): docs/ci.md. Never less than 1.
inline int SanitizerScaled(int n) {
  const int divisor = kThreadSanitizer ? 5 : kAddressSanitizer ? 2 : 1;
  return n >= divisor ? n / divisor : 1;
}

inline unsigned TestSeed() {
  unsigned seed = kDefaultTestSeed;
  if (const char* env = std::getenv("ARCHIL_TEST_SEED"); env != nullptr && *env != '\0') {
    seed = static_cast<unsigned>(std::strtoul(env, nullptr, 10));
  }
  std::printf("seed %u (override with ARCHIL_TEST_SEED=N)\n", seed);
  std::fflush(stdout);
  return seed;
}

// The same for a test with a default seed of its own, printed by the caller with
// SCOPED_TRACE(SeedTrace(seed)) so that a failure names it.
inline uint64_t TestSeed(uint64_t default_seed) {
  const char* env = std::getenv("ARCHIL_TEST_SEED");
  if (env == nullptr || *env == '\0') return default_seed;
  return std::strtoull(env, nullptr, 0);
}

inline std::string SeedTrace(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay with ARCHIL_TEST_SEED=" + std::to_string(seed) +
         ")";
}

}  // namespace archil
