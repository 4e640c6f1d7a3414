// The seed of a randomized test: ARCHIL_TEST_SEED when set, else a fixed default, so that every
// run is reproducible and a failure can be replayed. The seed is printed, so it shows in the
// output of a failed test.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace archil {

inline constexpr unsigned kDefaultTestSeed = 301;

inline unsigned TestSeed() {
  unsigned seed = kDefaultTestSeed;
  if (const char* env = std::getenv("ARCHIL_TEST_SEED"); env != nullptr && *env != '\0') {
    seed = static_cast<unsigned>(std::strtoul(env, nullptr, 10));
  }
  std::printf("seed %u (override with ARCHIL_TEST_SEED=N)\n", seed);
  std::fflush(stdout);
  return seed;
}

}  // namespace archil
