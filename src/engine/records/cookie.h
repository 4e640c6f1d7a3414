// Directory cookies (formats.md §4.3): the position of an entry in its directory, stable across
// changes and identical on every level of a lineage.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/siphash.h"

namespace archil::engine {

// Cookies 1 and 2 are the positions after "." and "..".
inline constexpr uint64_t kFirstEntryCookie = 3;

// cookie(name) = c < 3 ? 3 : c, with c = SipHash-2-4(dir_hash_key, name) >> 1: 63 bits, so it
// fits off_t.
uint64_t DentryCookie(const SipHashKey& dir_hash_key, std::string_view name);

}  // namespace archil::engine
