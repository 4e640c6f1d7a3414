#include "control/byte_range.h"

#include <gtest/gtest.h>

namespace archil {
namespace {

using Kind = ByteRange::Kind;

ByteRange Part(uint64_t offset, uint64_t length) { return {Kind::kPartial, offset, length}; }
ByteRange Whole(uint64_t size) { return {Kind::kWhole, 0, size}; }
const ByteRange kNone{Kind::kUnsatisfiable, 0, 0};

TEST(ByteRange, OneRangeInEachForm) {
  EXPECT_EQ(ResolveByteRange("bytes=0-99", 1000), Part(0, 100));
  EXPECT_EQ(ResolveByteRange("bytes=10-10", 1000), Part(10, 1));
  EXPECT_EQ(ResolveByteRange("bytes=900-", 1000), Part(900, 100));
  EXPECT_EQ(ResolveByteRange("bytes=-100", 1000), Part(900, 100));
  EXPECT_EQ(ResolveByteRange(" Bytes=5-9 ", 1000), Part(5, 5));
}

TEST(ByteRange, RangesPastTheEndAreCutOrUnsatisfiable) {
  EXPECT_EQ(ResolveByteRange("bytes=990-5000", 1000), Part(990, 10));
  EXPECT_EQ(ResolveByteRange("bytes=-5000", 1000), Part(0, 1000));
  EXPECT_EQ(ResolveByteRange("bytes=1000-", 1000), kNone);
  EXPECT_EQ(ResolveByteRange("bytes=1000-1001", 1000), kNone);
  EXPECT_EQ(ResolveByteRange("bytes=-0", 1000), kNone);
  EXPECT_EQ(ResolveByteRange("bytes=0-", 0), kNone);
  EXPECT_EQ(ResolveByteRange("bytes=-1", 0), kNone);
}

TEST(ByteRange, AnythingElseIsTheWholeBody) {
  for (const char* h :
       {"", "bytes=", "bytes=-", "bytes=a-b", "bytes=5-1", "items=0-1", "bytes=0-1,5-6",
        "bytes 0-1", "bytes=0-99999999999999999999", "bytes=--1", "bytes=1-2-3", "bytes=+1-2"}) {
    EXPECT_EQ(ResolveByteRange(h, 1000), Whole(1000)) << h;
  }
}

}  // namespace
}  // namespace archil
