#include "engine/records/cookie.h"

namespace archil::engine {

uint64_t DentryCookie(const SipHashKey& dir_hash_key, std::string_view name) {
  const uint64_t c = SipHash24(dir_hash_key, name) >> 1;
  return c < kFirstEntryCookie ? kFirstEntryCookie : c;
}

}  // namespace archil::engine
