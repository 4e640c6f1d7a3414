// Log objects: a round trip, names, and the refusal of every torn, flipped or misnumbered object.
#include "tier/log_object.h"

#include <gtest/gtest.h>

#include "engine/records/keys.h"
#include "engine/records/log_record.h"

namespace archil::tier {
namespace {

using engine::DiskNo;
using engine::Seq;

std::string Record(uint64_t seq, DiskNo disk = DiskNo(5)) {
  engine::LogRecord r;
  r.seq = Seq(seq);
  r.mutations.push_back({engine::LogOp::kPut, engine::Cf::kMeta,
                         engine::MetaKey(disk, engine::MetaType::kCounters),
                         "v" + std::to_string(seq)});
  return engine::EncodeLogRecord(r);
}

LogObject Sample() {
  LogObject o;
  o.owner_gen = 3;
  o.disk = DiskNo(5);
  o.first_seq = Seq(10);
  o.records = {Record(10), Record(11), Record(12)};
  return o;
}

TEST(LogObjectTest, RoundTripsAndIsNamedByDiskGenerationAndFirstSeq) {
  Result<LogObject> back = DecodeLogObject(EncodeLogObject(Sample()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Sample());
  EXPECT_EQ(back->last_seq(), Seq(12));
  EXPECT_EQ(LogObjectKey(DiskNo(5), 3, Seq(10)),
            "disks/dsk-0000000000000005/log/00000003/000000000000000a");
  EXPECT_TRUE(LogObjectKey(DiskNo(5), 3, Seq(10)).starts_with(LogObjectPrefix(DiskNo(5))));
}

TEST(LogObjectTest, EveryTruncationAndEveryFlippedByteIsRefused) {
  const std::string good = EncodeLogObject(Sample());
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(DecodeLogObject(good.substr(0, n)).ok()) << "truncated to " << n;
    std::string flipped = good;
    flipped[n] ^= 0x20;
    EXPECT_FALSE(DecodeLogObject(flipped).ok()) << "byte " << n << " flipped";
  }
}

TEST(LogObjectTest, RecordsMustBeTheDisksAndInSeqOrder) {
  LogObject gap = Sample();
  gap.records[1] = Record(13);
  EXPECT_EQ(DecodeLogObject(EncodeLogObject(gap)).status().code(), Status::Code::kCorruption);
  LogObject other = Sample();
  other.records[2] = Record(12, DiskNo(6));
  EXPECT_EQ(DecodeLogObject(EncodeLogObject(other)).status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace archil::tier
