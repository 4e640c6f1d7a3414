#include "engine/fs/chunk_map.h"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <vector>

#include "engine/test_util.h"

namespace archil::engine {
namespace {

using testing::Rng;

// An extent whose block i sits at seg_blk + i with CRC crc_base + i, so any piece can be checked.
Extent Ext(uint16_t off, uint16_t n, uint32_t seg_blk, uint32_t crc_base, uint64_t birth = 3) {
  Extent e;
  e.blk_off = off;
  e.nblk = n;
  e.seg_blk = seg_blk;
  e.seg_disk = DiskNo(0xD1);
  e.seg_no = SegNo(0x5E);
  e.birth = Epoch(birth);
  for (uint32_t i = 0; i < n; ++i) e.crcs.push_back(crc_base + i);
  return e;
}

ChunkOp Write(const Extent& e, uint64_t birth = 9, uint32_t tgen = 0) {
  return ChunkOp{ChunkOpType::kWrite, Epoch(birth), tgen, e};
}
ChunkOp Clip(uint16_t keep, uint64_t birth = 9) {
  return ChunkOp{ChunkOpType::kClip, Epoch(birth), 0, {}, keep};
}
ChunkOp Punch(uint16_t off, uint16_t n, uint64_t birth = 9) {
  return ChunkOp{ChunkOpType::kPunch, Epoch(birth), 0, {}, 0, off, n};
}

Versioned<ChunkRecord> Chunk(std::vector<Extent> extents, uint32_t tgen = 0) {
  return {Envelope{ValueKind::kValue, 0, Epoch(3)}, ChunkRecord{tgen, std::move(extents)}};
}

TEST(ChunkMapTest, SliceKeepsExactCrcsAndSegmentBlocks) {
  const Extent e = Ext(10, 20, 100, 1000);
  const Extent s = SliceExtent(e, 15, 18);
  EXPECT_EQ(s.blk_off, 15);
  EXPECT_EQ(s.nblk, 3);
  EXPECT_EQ(s.seg_blk, 105u);
  EXPECT_EQ(s.crcs, (std::vector<uint32_t>{1005, 1006, 1007}));
  EXPECT_EQ(s.seg_disk, e.seg_disk);
  EXPECT_EQ(s.birth, e.birth);
  EXPECT_EQ(SliceExtent(e, 10, 30), e);
}

TEST(ChunkMapTest, WriteIntoEmptyAndWhiteoutChunks) {
  Versioned<ChunkRecord> c{Envelope{ValueKind::kWhiteout, 0, Epoch(2)}, {}};
  std::vector<Extent> gone;
  ASSERT_TRUE(ApplyChunkOp(Write(Ext(4, 2, 7, 70), 9, 5), &c, &gone).ok());
  EXPECT_EQ(c.env, (Envelope{ValueKind::kValue, 0, Epoch(9)}));
  EXPECT_EQ(c.body.tgen, 5u);
  EXPECT_EQ(c.body.extents, std::vector<Extent>{Ext(4, 2, 7, 70)});
  EXPECT_TRUE(gone.empty());
}

TEST(ChunkMapTest, WriteSplitsOverlappedExtents) {
  // [0,10) at seg 100, [10,20) at seg 200, [30,40) at seg 300.
  auto c = Chunk({Ext(0, 10, 100, 1000), Ext(10, 10, 200, 2000), Ext(30, 10, 300, 3000)}, 7);
  std::vector<Extent> gone;
  // Overwrite [5, 33): keeps [0,5) of the first and [33,40) of the third.
  ASSERT_TRUE(ApplyChunkOp(Write(Ext(5, 28, 500, 5000, 9), 9, 2), &c, &gone).ok());
  EXPECT_EQ(c.body.tgen, 7u);  // max(old, op)
  EXPECT_EQ(c.env.birth, Epoch(9));
  const std::vector<Extent> want = {Ext(0, 5, 100, 1000), Ext(5, 28, 500, 5000, 9),
                                    Ext(33, 7, 303, 3003)};
  EXPECT_EQ(c.body.extents, want);
  const std::vector<Extent> superseded = {Ext(5, 5, 105, 1005), Ext(10, 10, 200, 2000),
                                          Ext(30, 3, 300, 3000)};
  EXPECT_EQ(gone, superseded);
  EXPECT_TRUE(CheckChunk(c.body).ok());
}

TEST(ChunkMapTest, WriteInsideOneExtentLeavesTwoPieces) {
  auto c = Chunk({Ext(0, 256, 1, 0)});
  std::vector<Extent> gone;
  ASSERT_TRUE(ApplyChunkOp(Write(Ext(100, 1, 900, 77)), &c, &gone).ok());
  EXPECT_EQ(c.body.extents, (std::vector<Extent>{Ext(0, 100, 1, 0), Ext(100, 1, 900, 77),
                                                 Ext(101, 155, 102, 101)}));
  EXPECT_EQ(gone, std::vector<Extent>{Ext(100, 1, 101, 100)});
}

TEST(ChunkMapTest, SuccessiveWritesInOneSegmentMakeOneExtent) {
  Versioned<ChunkRecord> c = Chunk({});
  ASSERT_TRUE(ApplyChunkOp(Write(Ext(0, 1, 7, 100)), &c, nullptr).ok());
  ASSERT_TRUE(ApplyChunkOp(Write(Ext(1, 2, 8, 101)), &c, nullptr).ok());
  // Filling a gap joins both neighbours.
  ASSERT_TRUE(ApplyChunkOp(Write(Ext(4, 1, 11, 104)), &c, nullptr).ok());
  ASSERT_TRUE(ApplyChunkOp(Write(Ext(3, 1, 10, 103)), &c, nullptr).ok());
  ASSERT_EQ(c.body.extents.size(), 1u);
  EXPECT_EQ(c.body.extents[0], Ext(0, 5, 7, 100));
  // Not joined: a jump in the segment, another epoch, another segment.
  ASSERT_TRUE(ApplyChunkOp(Write(Ext(5, 1, 20, 200)), &c, nullptr).ok());
  ASSERT_TRUE(ApplyChunkOp(Write(Ext(6, 1, 21, 201, 4)), &c, nullptr).ok());
  Extent other = Ext(7, 1, 22, 202);
  other.seg_no = SegNo(0x5F);
  ASSERT_TRUE(ApplyChunkOp(Write(other), &c, nullptr).ok());
  EXPECT_EQ(c.body.extents.size(), 4u);
  EXPECT_TRUE(CheckChunk(c.body).ok());
}

TEST(ChunkMapTest, ClipAndPunch) {
  auto c = Chunk({Ext(0, 10, 100, 1000), Ext(20, 10, 200, 2000)});
  std::vector<Extent> gone;
  ASSERT_TRUE(ApplyChunkOp(Clip(256), &c, &gone).ok());  // keeps everything
  EXPECT_EQ(c.body.extents.size(), 2u);
  EXPECT_TRUE(gone.empty());
  ASSERT_TRUE(ApplyChunkOp(Clip(25), &c, &gone).ok());
  EXPECT_EQ(c.body.extents, (std::vector<Extent>{Ext(0, 10, 100, 1000), Ext(20, 5, 200, 2000)}));
  EXPECT_EQ(gone, std::vector<Extent>{Ext(25, 5, 205, 2005)});
  gone.clear();
  ASSERT_TRUE(ApplyChunkOp(Punch(2, 20), &c, &gone).ok());
  EXPECT_EQ(c.body.extents, (std::vector<Extent>{Ext(0, 2, 100, 1000), Ext(22, 3, 202, 2002)}));
  EXPECT_EQ(gone, (std::vector<Extent>{Ext(2, 8, 102, 1002), Ext(20, 2, 200, 2000)}));
  gone.clear();
  ASSERT_TRUE(ApplyChunkOp(Clip(0, 11), &c, &gone).ok());
  EXPECT_TRUE(c.body.extents.empty());  // an empty VALUE: the commit thread decides what to write
  EXPECT_EQ(c.env, (Envelope{ValueKind::kValue, 0, Epoch(11)}));
  EXPECT_EQ(gone.size(), 2u);
}

TEST(ChunkMapTest, MalformedOperandsLeaveTheChunkAlone) {
  const auto before = Chunk({Ext(0, 10, 100, 1000)});
  std::vector<ChunkOp> bad = {Write(Ext(250, 7, 1, 0)), Write(Ext(0, 1, 0, 0)), Clip(257),
                              Punch(0, 0), Punch(200, 57)};
  Extent crcs = Ext(0, 2, 1, 0);
  crcs.crcs.pop_back();
  bad.push_back(Write(crcs));
  for (const ChunkOp& op : bad) {
    auto c = before;
    std::vector<Extent> gone;
    EXPECT_EQ(ApplyChunkOp(op, &c, &gone).code(), Status::Code::kCorruption);
    EXPECT_EQ(c, before);
    EXPECT_TRUE(gone.empty());
  }
}

// Model: what each block of the chunk holds (nullopt = hole).
struct Block {
  uint64_t seg_disk, seg_no;
  uint32_t seg_blk, crc;
  uint64_t birth;
  bool operator==(const Block&) const = default;
};
using Model = std::array<std::optional<Block>, kChunkBlocks>;

void Paint(Model* m, const Extent& e) {
  for (uint32_t i = 0; i < e.nblk; ++i) {
    (*m)[e.blk_off + i] =
        Block{e.seg_disk.value(), e.seg_no.value(), e.seg_blk + i, e.crcs[i], e.birth.value()};
  }
}

Model ModelOf(const ChunkRecord& c) {
  Model m;
  for (const Extent& e : c.extents) Paint(&m, e);
  return m;
}

TEST(ChunkMapTest, RandomOperationsMatchABlockModel) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Rng r(seed);
  for (int round = 0; round < 50; ++round) {
    Versioned<ChunkRecord> c{Envelope{ValueKind::kWhiteout, 0, Epoch(1)}, {}};
    std::optional<std::string> stored;  // the same history through the merge operator
    std::vector<std::string> operands;
    Model model;
    uint32_t next_seg_blk = 1;
    for (int step = 0; step < 60; ++step) {
      ChunkOp op;
      op.birth = Epoch(r.Range(1, 20));
      op.tgen = static_cast<uint32_t>(r.Range(0, 5));
      const uint64_t kind = r.Range(0, 9);
      uint32_t from = 0, to = 0;
      if (kind < 7) {
        from = static_cast<uint32_t>(r.Range(0, 255));
        to = static_cast<uint32_t>(r.Range(from + 1, std::min<uint32_t>(256, from + 64)));
        Extent e;
        e.blk_off = static_cast<uint16_t>(from);
        e.nblk = static_cast<uint16_t>(to - from);
        e.seg_blk = next_seg_blk;
        next_seg_blk += e.nblk;
        e.seg_disk = DiskNo(r.Range(1, 3));
        e.seg_no = SegNo(r.Range(1, 3));
        e.birth = op.birth;
        for (uint32_t i = 0; i < e.nblk; ++i) e.crcs.push_back(r.U32());
        op.op = ChunkOpType::kWrite;
        op.extent = e;
      } else if (kind < 8) {
        op.op = ChunkOpType::kClip;
        op.keep_blk = static_cast<uint16_t>(r.Range(0, 256));
        from = op.keep_blk;
        to = kChunkBlocks;
      } else {
        op.op = ChunkOpType::kPunch;
        op.punch_off = static_cast<uint16_t>(r.Range(0, 255));
        op.punch_nblk = static_cast<uint16_t>(r.Range(1, 256 - op.punch_off));
        from = op.punch_off;
        to = from + op.punch_nblk;
      }
      const uint32_t old_tgen = c.body.tgen;
      std::vector<Extent> gone;
      ASSERT_TRUE(ApplyChunkOp(op, &c, &gone).ok());
      operands.push_back(EncodeChunkOp(op));

      // Superseded pieces are exactly what the model held in [from, to), in block order.
      Model removed;
      for (const Extent& e : gone) Paint(&removed, e);
      for (uint32_t b = 0; b < kChunkBlocks; ++b) {
        ASSERT_EQ(removed[b], (b >= from && b < to) ? model[b] : std::nullopt) << "block " << b;
      }
      for (size_t i = 1; i < gone.size(); ++i) ASSERT_LE(gone[i - 1].end(), gone[i].blk_off);

      for (uint32_t b = from; b < to; ++b) model[b].reset();
      if (op.op == ChunkOpType::kWrite) Paint(&model, op.extent);
      ASSERT_TRUE(CheckChunk(c.body).ok());
      ASSERT_EQ(ModelOf(c.body), model);
      EXPECT_EQ(c.env.birth, op.birth);
      EXPECT_EQ(c.body.tgen, std::max(old_tgen, op.tgen));

      // Log replay: base + operands through the merge operator gives the same bytes.
      if (r.Range(0, 7) == 0) {
        std::vector<std::string_view> views(operands.begin(), operands.end());
        Result<std::string> merged = ChunkFullMerge(stored, views);
        ASSERT_TRUE(merged.ok()) << merged.status().ToString();
        ASSERT_EQ(*merged, EncodeChunk(c.env, c.body));
        stored = *merged;
        operands.clear();
      }
    }
  }
}

TEST(ChunkMapTest, FullMergeRejectsBadInput) {
  const std::string op = EncodeChunkOp(Write(Ext(0, 1, 1, 0)));
  EXPECT_TRUE(ChunkFullMerge(std::nullopt, {op}).ok());
  EXPECT_TRUE(ChunkFullMerge(EncodeWhiteout(Epoch(1)), {op}).ok());
  EXPECT_EQ(*ChunkFullMerge(EncodeWhiteout(Epoch(1)), {}), EncodeWhiteout(Epoch(1)));
  EXPECT_EQ(ChunkFullMerge(std::nullopt, {}).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(ChunkFullMerge(std::string("\x02"), {op}).status().code(), Status::Code::kCorruption);
  EXPECT_EQ(ChunkFullMerge(std::nullopt, {std::string_view(op).substr(0, 20)}).status().code(),
            Status::Code::kCorruption);
}

// ---- SegUsage ----

TEST(SegUsageMergeTest, SetAndClear) {
  SegUsageRecord s = SegUsageRecord::Empty(20);
  ASSERT_TRUE(ApplySegUsageOp({SegUsageOpType::kSet, 1, 20}, &s).ok());
  EXPECT_EQ(s.live_blocks, 20u);
  EXPECT_FALSE(s.live(0));
  ASSERT_TRUE(ApplySegUsageOp({SegUsageOpType::kClear, 5, 3}, &s).ok());
  EXPECT_EQ(s.live_blocks, 17u);
  EXPECT_TRUE(s.live(4));
  EXPECT_FALSE(s.live(5));
  EXPECT_FALSE(s.live(7));
  EXPECT_TRUE(s.live(8));
  EXPECT_TRUE(DecodeSegUsage(EncodeSegUsage(s)).ok());
}

TEST(SegUsageMergeTest, TwiceBornOrFreedAndOutOfRangeAreCorruption) {
  SegUsageRecord s = SegUsageRecord::Empty(20);
  ASSERT_TRUE(ApplySegUsageOp({SegUsageOpType::kSet, 3, 2}, &s).ok());
  const SegUsageRecord before = s;
  for (SegUsageOp op : std::vector<SegUsageOp>{{SegUsageOpType::kSet, 1, 3},    // 3 is set
                                               {SegUsageOpType::kClear, 4, 2},  // 5 is clear
                                               {SegUsageOpType::kSet, 0, 1},    // header
                                               {SegUsageOpType::kSet, 20, 2},   // past 20
                                               {SegUsageOpType::kSet, 10, 0},   // empty
                                               {SegUsageOpType::kSet, UINT32_MAX, 2}}) {
    EXPECT_EQ(ApplySegUsageOp(op, &s).code(), Status::Code::kCorruption)
        << op.start_blk << "+" << op.nblk;
    EXPECT_EQ(s, before);  // all or nothing
  }
  EXPECT_TRUE(ApplySegUsageOp({SegUsageOpType::kSet, 20, 1}, &s).ok());
}

TEST(SegUsageMergeTest, RandomOperationsMatchABitModel) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Rng r(seed);
  const uint32_t max_blocks = 100;
  SegUsageRecord s = SegUsageRecord::Empty(max_blocks);
  std::string stored = EncodeSegUsage(s);
  std::vector<std::string> operands;
  std::vector<bool> model(max_blocks + 1, false);
  for (int step = 0; step < 2000; ++step) {
    const uint32_t start = static_cast<uint32_t>(r.Range(1, max_blocks));
    const uint32_t n =
        static_cast<uint32_t>(r.Range(1, std::min<uint32_t>(8, max_blocks - start + 1)));
    const SegUsageOp op{r.Bool() ? SegUsageOpType::kSet : SegUsageOpType::kClear, start, n};
    bool valid = true;
    for (uint32_t b = start; b < start + n; ++b) {
      valid = valid && model[b] != (op.op == SegUsageOpType::kSet);
    }
    ASSERT_EQ(ApplySegUsageOp(op, &s).ok(), valid);
    if (!valid) continue;
    for (uint32_t b = start; b < start + n; ++b) model[b] = op.op == SegUsageOpType::kSet;
    operands.push_back(EncodeSegUsageOp(op));
    uint32_t live = 0;
    for (uint32_t b = 0; b <= max_blocks; ++b) {
      ASSERT_EQ(s.live(b), model[b]);
      live += model[b];
    }
    ASSERT_EQ(s.live_blocks, live);
    if (r.Range(0, 20) == 0) {
      std::vector<std::string_view> views(operands.begin(), operands.end());
      Result<std::string> merged = SegUsageFullMerge(stored, views);
      ASSERT_TRUE(merged.ok()) << merged.status().ToString();
      ASSERT_EQ(*merged, EncodeSegUsage(s));
      stored = *merged;
      operands.clear();
    }
  }
  EXPECT_EQ(SegUsageFullMerge(std::nullopt, {}).status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace archil::engine
