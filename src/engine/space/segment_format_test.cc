#include "engine/space/segment_format.h"

#include <gtest/gtest.h>

#include "base/coding.h"
#include "base/crc32c.h"
#include "engine/test_util.h"

namespace archil::engine {
namespace {

using testing::Rng;

void ExpectCorruption(const Status& s) {
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
}

SegmentHeader SampleHeader() {
  SegmentHeader h;
  h.flags = kSegmentFlagRepackOutput;
  h.seg_disk = DiskNo(0x1111);
  h.seg_no = MakeSegNo(2, 3);
  h.root = DiskNo(0x2222);
  h.owner_gen = 2;
  h.max_blocks = 16384;
  h.created = 123456789;
  h.server_id[0] = 0xAB;
  return h;
}

SegmentFooter SampleFooter(Rng& r, uint32_t data_end_blk) {
  SegmentFooter f;
  f.flags = r.Bool() ? kSegmentFlagRecordsIncomplete : 0;
  f.data_end_blk = data_end_blk;
  f.seg_disk = DiskNo(r.U64());
  f.seg_no = SegNo(r.U64());
  f.sealed = r.I64();
  for (uint32_t b = 1; b < data_end_blk;) {
    const uint32_t n = static_cast<uint32_t>(r.Range(1, data_end_blk - b));
    f.records.push_back({b, n, Ino(r.U64()), r.U64(), static_cast<uint32_t>(r.Range(0, 3))});
    b += n;
  }
  for (uint32_t b = 1; b < data_end_blk; ++b) f.block_crcs.push_back(r.U32());
  return f;
}

TEST(SegmentFormatTest, HeaderLayout) {
  const std::string v = EncodeSegmentHeader(SampleHeader());
  ASSERT_EQ(v.size(), 4096u);
  EXPECT_EQ(v.substr(0, 8), std::string("ARCHSEG\0", 8));
  EXPECT_EQ(DecodeFixed16LE(&v[8]), 1u);
  EXPECT_EQ(DecodeFixed16LE(&v[10]), 1u);
  EXPECT_EQ(DecodeFixed32LE(&v[12]), 4096u);
  EXPECT_EQ(DecodeFixed64LE(&v[16]), 0x1111u);
  EXPECT_EQ(DecodeFixed64LE(&v[24]), (2ULL << 32) | 3);
  EXPECT_EQ(DecodeFixed64LE(&v[32]), 0x2222u);
  EXPECT_EQ(DecodeFixed32LE(&v[40]), 2u);
  EXPECT_EQ(DecodeFixed32LE(&v[44]), 16384u);
  EXPECT_EQ(DecodeFixed64LE(&v[48]), 123456789u);
  EXPECT_EQ(static_cast<uint8_t>(v[56]), 0xAB);
  EXPECT_EQ(v.substr(72, 4020), std::string(4020, '\0'));
  EXPECT_EQ(DecodeFixed32LE(&v[4092]), Crc32c(v.data(), 4092));
  Result<SegmentHeader> h = DecodeSegmentHeader(v);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(*h, SampleHeader());

  std::string bad = v;
  bad[100] = 1;  // covered by the CRC
  ExpectCorruption(DecodeSegmentHeader(bad).status());
  bad = v;
  bad[0] = 'X';
  ExpectCorruption(DecodeSegmentHeader(bad).status());
  bad = v;
  bad[8] = 2;
  EXPECT_EQ(DecodeSegmentHeader(bad).status().message(), "segment fmt 2 unsupported");
  ExpectCorruption(DecodeSegmentHeader(v.substr(0, 4095)).status());
}

TEST(SegmentFormatTest, FooterAndTailRoundTrip) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Rng r(seed);
  for (int i = 0; i < 100; ++i) {
    const SegmentFooter f = SampleFooter(r, static_cast<uint32_t>(r.Range(1, 300)));
    const std::string v = EncodeSegmentFooter(f);
    ASSERT_EQ(v.size(), 64 + 32 * f.records.size() + 4 * (f.data_end_blk - 1));
    Result<SegmentFooter> d = DecodeSegmentFooter(v);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(*d, f);
    EXPECT_EQ(EncodeSegmentFooter(*d), v);
    for (size_t n = 0; n < v.size(); ++n) {
      ExpectCorruption(DecodeSegmentFooter(std::string_view(v).substr(0, n)).status());
    }
    ExpectCorruption(DecodeSegmentFooter(v + "0000").status());

    const uint64_t footer_off = uint64_t{f.data_end_blk} * kBlockSize;
    const SegmentTail t = TailFor(footer_off, v);
    const std::string tv = EncodeSegmentTail(t);
    ASSERT_EQ(tv.size(), 32u);
    Result<SegmentTail> dt = DecodeSegmentTail(tv);
    ASSERT_TRUE(dt.ok()) << dt.status().ToString();
    EXPECT_EQ(*dt, t);
    EXPECT_EQ(dt->footer_crc, Crc32c(v));
    for (size_t n = 0; n < tv.size(); ++n) {
      ExpectCorruption(DecodeSegmentTail(std::string_view(tv).substr(0, n)).status());
    }
  }
}

TEST(SegmentFormatTest, FooterLayoutAndChecks) {
  Rng r(1);
  SegmentFooter f = SampleFooter(r, 3);
  f.records = {{1, 2, Ino(0x77), 0x100000, kSegmentRecordRmw}};
  const std::string v = EncodeSegmentFooter(f);
  ASSERT_EQ(v.size(), 64u + 32 + 8);
  EXPECT_EQ(v.substr(0, 8), std::string("ARCHSFT\0", 8));
  EXPECT_EQ(DecodeFixed32LE(&v[12]), 1u);  // n_records
  EXPECT_EQ(DecodeFixed32LE(&v[16]), 3u);  // data_end_blk
  EXPECT_EQ(DecodeFixed32LE(&v[48]), 32u);
  EXPECT_EQ(DecodeFixed32LE(&v[52]), 8u);
  EXPECT_EQ(DecodeFixed32LE(&v[60]), Crc32c(v.data(), 60));
  EXPECT_EQ(DecodeFixed32LE(&v[64]), 1u);
  EXPECT_EQ(DecodeFixed64LE(&v[72]), 0x77u);
  EXPECT_EQ(DecodeFixed64LE(&v[80]), 0x100000u);
  EXPECT_EQ(DecodeFixed32LE(&v[88]), kSegmentRecordRmw);
  EXPECT_EQ(DecodeFixed32LE(&v[96]), f.block_crcs[0]);

  SegmentFooter out = f;
  out.records[0].nblk = 3;  // passes F
  ExpectCorruption(DecodeSegmentFooter(EncodeSegmentFooter(out)).status());
  out = f;
  out.records[0].seg_blk = 0;  // the header block
  ExpectCorruption(DecodeSegmentFooter(EncodeSegmentFooter(out)).status());
  std::string bad = v;
  bad[20] = 1;  // reserved, but inside the fixed part's CRC
  ExpectCorruption(DecodeSegmentFooter(bad).status());

  const std::string tail = EncodeSegmentTail(TailFor(3 * kBlockSize, v));
  EXPECT_EQ(tail.substr(0, 8), "ARCHSEND");
  EXPECT_EQ(DecodeFixed64LE(&tail[8]), 3u * kBlockSize);
  EXPECT_EQ(DecodeFixed32LE(&tail[16]), v.size());
  EXPECT_EQ(DecodeFixed32LE(&tail[20]), Crc32c(v));
  EXPECT_EQ(DecodeFixed16LE(&tail[24]), 1u);
  EXPECT_EQ(DecodeFixed32LE(&tail[28]), Crc32c(tail.data(), 28));
  ExpectCorruption(DecodeSegmentTail(EncodeSegmentTail({100, 64, 0})).status());  // unaligned
  bad = tail;
  bad[24] = 9;
  EXPECT_EQ(DecodeSegmentTail(bad).status().message(), "segment fmt 9 unsupported");
}

}  // namespace
}  // namespace archil::engine
