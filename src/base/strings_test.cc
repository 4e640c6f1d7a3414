#include "base/strings.h"

#include <gtest/gtest.h>

#include "base/random.h"

namespace archil {
namespace {

// RFC 4648 §10's test vectors, and every byte value.
TEST(StringsTest, Base64) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode(std::string("\xfb\xff\x00", 3)), "+/8A");
}

TEST(StringsTest, Hex) {
  EXPECT_EQ(HexEncode(std::string("\x00\xff\x1a", 3)), "00ff1a");
  EXPECT_TRUE(IsLowerHex("0123456789abcdef", 16));
  EXPECT_FALSE(IsLowerHex("0123456789ABCDEF", 16));
  EXPECT_FALSE(IsLowerHex("0123", 16));
  EXPECT_EQ(ParseLowerHex("00000001", 8), 1u);
  EXPECT_EQ(ParseLowerHex("ffffffffffffffff", 16), UINT64_MAX);
  EXPECT_EQ(ParseLowerHex("0000000000000a2f", 16), 0xa2fu);
  EXPECT_EQ(ParseLowerHex("0000000A", 8), std::nullopt);
  EXPECT_EQ(ParseLowerHex("0001", 8), std::nullopt);
  EXPECT_EQ(ParseLowerHex("00000000000000000", 17), std::nullopt);
}

TEST(StringsTest, Split) {
  auto parts = Split("/api/disks//x", '/');
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[0], "");
  EXPECT_EQ(parts[2], "disks");
  EXPECT_EQ(parts[3], "");
}

TEST(StringsTest, ParseUint64RejectsJunkAndOverflow) {
  EXPECT_EQ(ParseUint64("42"), 42u);
  EXPECT_EQ(ParseUint64("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseUint64("18446744073709551616"));
  EXPECT_FALSE(ParseUint64(""));
  EXPECT_FALSE(ParseUint64("-1"));
  EXPECT_FALSE(ParseUint64("1 "));
}

TEST(StringsTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("d\xc3\xa9j\xc3\xa0 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
}

TEST(RandomTest, HexIsFreshEachTime) {
  Result<std::string> a = SecureRandomHex(16);
  Result<std::string> b = SecureRandomHex(16);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(IsLowerHex(*a, 32));
  EXPECT_NE(*a, *b);
}

}  // namespace
}  // namespace archil
