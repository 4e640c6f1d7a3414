// The seed for a randomized io test: `default_seed`, unless ARCHIL_TEST_SEED is set (to replay a
// failure). Tests print it with SCOPED_TRACE so a failure names it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace archil::io {

inline uint64_t TestSeed(uint64_t default_seed) {
  const char* env = std::getenv("ARCHIL_TEST_SEED");
  if (env == nullptr || *env == '\0') return default_seed;
  return std::strtoull(env, nullptr, 0);
}

inline std::string SeedTrace(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay with ARCHIL_TEST_SEED=" + std::to_string(seed) +
         ")";
}

}  // namespace archil::io
