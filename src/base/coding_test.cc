#include "base/coding.h"

#include <gtest/gtest.h>

#include <random>

#include "base/test_seed.h"

namespace archil {
namespace {

TEST(CodingTest, ByteOrders) {
  std::string s;
  PutFixed64BE(&s, 0x0102030405060708ULL);
  EXPECT_EQ(s, std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  s.clear();
  PutFixed64LE(&s, 0x0102030405060708ULL);
  EXPECT_EQ(s, std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  s.clear();
  PutFixed32BE(&s, 0xA1B2C3D4);
  PutFixed32LE(&s, 0xA1B2C3D4);
  PutFixed16LE(&s, 0xBEEF);
  EXPECT_EQ(s, std::string("\xA1\xB2\xC3\xD4\xD4\xC3\xB2\xA1\xEF\xBE", 10));
  EXPECT_EQ(DecodeFixed32BE(s.data()), 0xA1B2C3D4u);
  EXPECT_EQ(DecodeFixed32LE(s.data() + 4), 0xA1B2C3D4u);
  EXPECT_EQ(DecodeFixed16LE(s.data() + 8), 0xBEEF);
}

// Big-endian keys sort numerically as bytes: what RocksDB's bytewise comparator relies on.
TEST(CodingTest, BigEndianOrderIsNumericOrder) {
  const unsigned seed = TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 10000; ++i) {
    uint64_t a = rng() >> (rng() % 64), b = rng() >> (rng() % 64);
    std::string ka, kb;
    PutFixed64BE(&ka, a);
    PutFixed64BE(&kb, b);
    ASSERT_EQ(a < b, ka < kb) << a << " " << b;
    ASSERT_EQ(DecodeFixed64BE(ka.data()), a);
  }
}

TEST(CodingTest, DecoderReadsInOrderAndNeverPastTheEnd) {
  std::string s;
  s.push_back('\x05');
  PutFixed32LE(&s, 77);
  PutString16(&s, "name");
  PutFixed64BE(&s, 9);
  Decoder d(s);
  uint8_t u8 = 0;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  std::string_view str;
  ASSERT_TRUE(d.GetU8(&u8) && d.Get32LE(&u32) && d.GetString16(&str) && d.Get64BE(&u64));
  EXPECT_EQ(u8, 5);
  EXPECT_EQ(u32, 77u);
  EXPECT_EQ(str, "name");
  EXPECT_EQ(u64, 9u);
  EXPECT_EQ(d.remaining(), 0u);
  EXPECT_FALSE(d.GetU8(&u8));
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.remaining(), 0u);

  // A string whose length runs past the input fails, and so does everything after.
  std::string bad;
  PutFixed16LE(&bad, 100);
  bad += "short";
  Decoder b(bad);
  EXPECT_FALSE(b.GetString16(&str));
  EXPECT_FALSE(b.Skip(0));
  // Every truncation of a valid record fails somewhere, never reads out of bounds.
  for (size_t n = 0; n < s.size(); ++n) {
    Decoder t(std::string_view(s.data(), n));
    bool all = t.GetU8(&u8) && t.Get32LE(&u32) && t.GetString16(&str) && t.Get64BE(&u64);
    EXPECT_FALSE(all) << n;
  }
}

}  // namespace
}  // namespace archil
