#include "engine/fs/open_segment.h"

#include <gtest/gtest.h>

namespace archil::engine {
namespace {

constexpr uint32_t kBlocks = 16;  // data blocks per segment in these tests

TEST(OpenSegmentTest, NothingIsOpenUntilStart) {
  OpenSegment s;
  EXPECT_EQ(s.mark(), std::nullopt);
  EXPECT_EQ(s.current(), std::nullopt);
  EXPECT_FALSE(s.RoomFor(1, kBlocks).open);
  EXPECT_FALSE(s.RoomFor(1, kBlocks).full);
}

TEST(OpenSegmentTest, TakeHandsOutBlocksFromOneUntilFull) {
  OpenSegment s;
  s.Start(SegNo(7));
  OpenSegment::Taken a = s.Take(10);
  EXPECT_EQ(a.seg, SegNo(7));
  EXPECT_EQ(a.blk, 1u);  // block 0 is the header
  EXPECT_FALSE(a.recorded);
  EXPECT_EQ(s.Take(6).blk, 11u);
  EXPECT_FALSE(s.RoomFor(0, kBlocks).full);  // blocks 1..16 handed out: exactly full
  EXPECT_TRUE(s.RoomFor(1, kBlocks).full);
  EXPECT_EQ(s.UsageOf(SegNo(7)).handed_out, 16u);
}

TEST(OpenSegmentTest, RecordedOnlyForTheSegmentStillOpen) {
  OpenSegment s;
  s.Start(SegNo(7));
  EXPECT_EQ(s.current(/*recorded_only=*/true), std::nullopt);
  s.Recorded(SegNo(6));
  EXPECT_FALSE(s.Take(1).recorded);
  s.Recorded(SegNo(7));
  EXPECT_TRUE(s.Take(1).recorded);
  EXPECT_EQ(s.current(true), SegNo(7));
  s.Start(SegNo(8));  // a new segment starts unrecorded
  EXPECT_EQ(s.current(true), std::nullopt);
}

TEST(OpenSegmentTest, LiveBlocksCountOnlyForTheOpenSegmentAndNeverBelowZero) {
  OpenSegment s;
  s.Start(SegNo(7));
  s.AddLive(SegNo(7), 5);
  s.AddLive(SegNo(6), 100);
  s.SubLive(SegNo(7), 2);
  EXPECT_EQ(s.UsageOf(SegNo(7)).live, 3u);
  EXPECT_TRUE(s.UsageOf(SegNo(7)).open);
  EXPECT_FALSE(s.UsageOf(SegNo(6)).open);
  s.SubLive(SegNo(7), 10);
  EXPECT_EQ(s.UsageOf(SegNo(7)).live, 0u);
}

TEST(OpenSegmentTest, RestorePutsTheCursorBackAndMovesTheGenerationOn) {
  OpenSegment s;
  s.Start(SegNo(7));
  s.Take(4);
  s.Written(SegNo(7), 5);
  const OpenSegment::Mark before = *s.mark();
  const OpenSegment::Saved saved = s.Save();
  s.Take(3);
  s.Written(SegNo(7), 8);
  s.AddLive(SegNo(7), 3);
  s.Close();
  EXPECT_EQ(s.mark(), std::nullopt);
  s.Restore(saved);
  const OpenSegment::Mark after = *s.mark();
  EXPECT_EQ(after.seg, SegNo(7));
  EXPECT_EQ(after.written, before.written);
  EXPECT_GT(after.gen, before.gen);  // a syncer that saw `before` must not drop intents
  EXPECT_EQ(s.Take(1).blk, 5u);      // the blocks the failed prepare took are handed out again
  EXPECT_EQ(s.UsageOf(SegNo(7)).live, 0u);
}

TEST(OpenSegmentTest, RewindTakesTheSegmentAgainFromItsFirstBlock) {
  OpenSegment s;
  s.Start(SegNo(7));
  s.Take(9);
  s.Written(SegNo(7), 10);
  const uint64_t gen = s.mark()->gen;
  s.Rewind();
  EXPECT_EQ(s.mark()->written, 1u);
  EXPECT_GT(s.mark()->gen, gen);
  EXPECT_EQ(s.Take(2).blk, 1u);
}

TEST(OpenSegmentTest, WrittenOnlyMovesForward) {
  OpenSegment s;
  s.Start(SegNo(7));
  s.Written(SegNo(7), 9);
  s.Written(SegNo(7), 4);   // a smaller write finishing later
  s.Written(SegNo(3), 12);  // another segment's
  EXPECT_EQ(s.mark()->written, 9u);
}

}  // namespace
}  // namespace archil::engine
