#include "engine/types.h"

#include <gtest/gtest.h>

#include "engine/records/cookie.h"
#include "engine/test_util.h"

namespace archil::engine {
namespace {

TEST(EngineTypesTest, DiskIdText) {
  Result<DiskId> id = DiskId::Parse("dsk-00000000deadbeef");
  ASSERT_TRUE(id.ok());
  Result<DiskNo> no = DiskNoFromId(*id);
  ASSERT_TRUE(no.ok());
  EXPECT_EQ(no->value(), 0xdeadbeefULL);
  EXPECT_EQ(DiskIdFromNo(DiskNo(0xdeadbeefULL)).str(), "dsk-00000000deadbeef");
  EXPECT_EQ(DiskIdFromNo(DiskNo(UINT64_MAX)).str(), "dsk-ffffffffffffffff");
  EXPECT_EQ(DiskNoFromId(DiskIdFromNo(DiskNo(UINT64_MAX)))->value(), UINT64_MAX);
  EXPECT_EQ(DiskNoFromId(DiskId()).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(*DiskNoFromText("dsk-00000000000000ff"), DiskNo(255));
  EXPECT_FALSE(DiskNoFromText("dsk-0000000000000000").ok());
  EXPECT_FALSE(DiskNoFromText("dsk-00000000000000FF").ok());
  EXPECT_FALSE(DiskNoFromText("disk-1").ok());
  EXPECT_EQ(DiskNoFromId(*DiskId::Parse("dsk-0000000000000000")).status().code(),
            Status::Code::kInvalidArgument);
}

TEST(EngineTypesTest, InodeNumbers) {
  EXPECT_EQ(kRootIno.value(), 1u);
  EXPECT_EQ(MakeIno(0, 1), kRootIno);
  const Ino ino = MakeIno(0xABCDEF, 0x12'3456'789A);
  EXPECT_EQ(ino.value(), 0xABCDEF'12'3456'789AULL);
  EXPECT_EQ(LineageIndexOf(ino), 0xABCDEFu);
  EXPECT_EQ(CounterOf(ino), 0x12'3456'789AULL);
  EXPECT_EQ(LineageIndexOf(MakeIno(kMaxLineageIndex, kInoCounterMask)), kMaxLineageIndex);
  EXPECT_EQ(MakeSegNo(7, 9).value(), (7ULL << 32) | 9);
  EXPECT_EQ(OwnerGenOf(MakeSegNo(7, 9)), 7u);
  EXPECT_EQ(kChunkBlocks * kBlockSize, 1u << kChunkShift);
}

TEST(EngineTypesTest, Names) {
  EXPECT_TRUE(IsValidFileName("a"));
  EXPECT_TRUE(IsValidFileName(std::string(255, 'x')));
  EXPECT_FALSE(IsValidFileName(""));
  EXPECT_FALSE(IsValidFileName(std::string(256, 'x')));
  EXPECT_FALSE(IsValidFileName("a/b"));
  EXPECT_FALSE(IsValidFileName(std::string("a\0b", 3)));
  EXPECT_TRUE(IsValidXattrName("user.a/b"));
  EXPECT_FALSE(IsValidXattrName(std::string("user\0", 5)));
  EXPECT_FALSE(IsValidXattrName(std::string(256, 'x')));
}

SipHashKey ReferenceKey() {
  SipHashKey key;
  for (int i = 0; i < 16; ++i) key[i] = static_cast<uint8_t>(i);
  return key;
}

TEST(DentryCookieTest, IsSipHashShiftedRight) {
  // SipHash-2-4 reference vectors for 1 and 2 bytes (00, 00 01), shifted right by one.
  EXPECT_EQ(DentryCookie(ReferenceKey(), std::string(1, '\0')), 0x74f839c593dc67fdULL >> 1);
  EXPECT_EQ(DentryCookie(ReferenceKey(), std::string("\0\1", 2)), 0x0d6c8009d9a94f5aULL >> 1);
}

TEST(DentryCookieTest, SixtyThreeBitsAndAtLeastThree) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  testing::Rng rng(seed);
  const SipHashKey key = rng.Array<16>();
  for (int i = 0; i < 2000; ++i) {
    const std::string name = rng.Name(40);
    const uint64_t c = DentryCookie(key, name);
    EXPECT_LT(c, uint64_t{1} << 63);
    EXPECT_GE(c, kFirstEntryCookie);
    EXPECT_EQ(c, DentryCookie(key, name));
    const uint64_t raw = SipHash24(key, name) >> 1;
    EXPECT_EQ(c, raw < 3 ? 3 : raw);
  }
  SipHashKey other = key;
  other[0] ^= 0x80;
  EXPECT_NE(DentryCookie(key, "name"), DentryCookie(other, "name"));
}

}  // namespace
}  // namespace archil::engine
