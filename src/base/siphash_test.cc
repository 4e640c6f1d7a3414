#include "base/siphash.h"

#include <gtest/gtest.h>

#include <string>

namespace archil {
namespace {

SipHashKey ReferenceKey() {
  SipHashKey key;
  for (int i = 0; i < 16; ++i) key[i] = static_cast<uint8_t>(i);
  return key;
}

std::string ReferenceMessage(int n) {
  std::string m;
  for (int i = 0; i < n; ++i) m.push_back(static_cast<char>(i));
  return m;
}

// The paper's appendix vectors (key 00..0f, message 00..n-1), as 64-bit little-endian values.
TEST(SipHashTest, ReferenceVectors) {
  const SipHashKey key = ReferenceKey();
  EXPECT_EQ(SipHash24(key, ReferenceMessage(0)), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(SipHash24(key, ReferenceMessage(1)), 0x74f839c593dc67fdULL);
  EXPECT_EQ(SipHash24(key, ReferenceMessage(2)), 0x0d6c8009d9a94f5aULL);
  EXPECT_EQ(SipHash24(key, ReferenceMessage(3)), 0x85676696d7fb7e2dULL);
  EXPECT_EQ(SipHash24(key, ReferenceMessage(15)), 0xa129ca6149be45e5ULL);
  EXPECT_EQ(SipHash24(key, ReferenceMessage(63)), 0x958a324ceb064572ULL);
}

TEST(SipHashTest, KeyMatters) {
  SipHashKey other = ReferenceKey();
  other[15] ^= 1;
  EXPECT_NE(SipHash24(ReferenceKey(), "name"), SipHash24(other, "name"));
  EXPECT_NE(SipHash24(ReferenceKey(), "name"), SipHash24(ReferenceKey(), "namf"));
}

}  // namespace
}  // namespace archil
