// Cryptographically secure randomness from the kernel (getrandom(2)).
//
// Used for identifiers and secrets. Thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace archil {

// Fills `out[0, n)` with random bytes. Fails only if the kernel refuses (never on Linux >= 3.17
// once the pool is initialised).
Status SecureRandomBytes(void* out, size_t n);

// `n` random bytes as 2n lower-case hex digits.
Result<std::string> SecureRandomHex(size_t n);

}  // namespace archil
