#include "engine/fs/epoch_table.h"

#include <gtest/gtest.h>

namespace archil::engine {
namespace {

EpochRecord Checkpoint(std::string name, int64_t at) {
  EpochRecord r;
  r.state = EpochState::kCheckpoint;
  r.checkpoint_name = std::move(name);
  r.frozen_at = at;
  return r;
}

EpochRecord Released(uint32_t branch_pins = 0) {
  EpochRecord r;
  r.state = EpochState::kReleased;
  r.branch_pins = branch_pins;
  return r;
}

TEST(EpochTableTest, AFreshDiskPinsNothing) {
  EpochTable t;
  t.Restore(Epoch(1), {});
  EXPECT_EQ(t.Current().open, Epoch(1));
  EXPECT_FALSE(t.Current().any_pinned);
  EXPECT_FALSE(t.PinnedIn(Epoch(0), Epoch(100)));
  EXPECT_TRUE(t.Checkpoints().empty());
}

TEST(EpochTableTest, ACheckpointFreezesTheOpenEpochAndUnfreezingUndoesIt) {
  EpochTable t;
  t.Restore(Epoch(3), {});
  t.Freeze(Epoch(3), Checkpoint("a", 7));
  EXPECT_EQ(t.Current().open, Epoch(4));
  EXPECT_TRUE(t.Current().any_pinned);
  EXPECT_EQ(t.CheckpointNamed("a"), Epoch(3));
  ASSERT_EQ(t.Checkpoints().size(), 1u);
  EXPECT_EQ(t.Checkpoints()[0].created_ns, 7);
  t.Unfreeze(Epoch(3));
  EXPECT_EQ(t.Current().open, Epoch(3));
  EXPECT_FALSE(t.Current().any_pinned);
  EXPECT_EQ(t.CheckpointNamed("a"), std::nullopt);
}

TEST(EpochTableTest, SetReturnsWhatPutBackRestores) {
  EpochTable t;
  t.Restore(Epoch(9), {{2, Checkpoint("a", 1)}});
  std::optional<EpochRecord> before = t.Set(Epoch(2), Released());
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(*before, Checkpoint("a", 1));
  EXPECT_FALSE(t.Current().any_pinned);
  EXPECT_EQ(t.ReleasedUnpinned(), std::vector<Epoch>{Epoch(2)});
  t.PutBack(Epoch(2), before);
  EXPECT_EQ(t.CheckpointNamed("a"), Epoch(2));
  // An entry that did not exist goes again.
  std::optional<EpochRecord> none = t.Set(Epoch(5), Released(1));
  EXPECT_FALSE(none.has_value());
  EXPECT_TRUE(t.PinnedIn(Epoch(5), Epoch(5)));
  t.PutBack(Epoch(5), none);
  EXPECT_FALSE(t.PinnedIn(Epoch(3), Epoch(8)));
}

TEST(EpochTableTest, PinnedInCountsCheckpointsAndBranchForksOnlyInsideTheRange) {
  EpochTable t;
  t.Restore(Epoch(20), {{2, Checkpoint("a", 1)}, {5, Released()}, {8, Released(2)}});
  EXPECT_TRUE(t.PinnedIn(Epoch(2), Epoch(2)));
  EXPECT_FALSE(t.PinnedIn(Epoch(3), Epoch(7)));  // 5 is released and unpinned
  EXPECT_TRUE(t.PinnedIn(Epoch(3), Epoch(8)));   // 8 is a live branch's fork
  EXPECT_FALSE(t.PinnedIn(Epoch(9), Epoch(19)));
  EXPECT_EQ(t.ReleasedUnpinned(), std::vector<Epoch>{Epoch(5)});
}

TEST(EpochTableTest, NeighboursAreTheNearestPinnedEpochsElseZeroAndTheOpenOne) {
  EpochTable t;
  t.Restore(Epoch(20), {{2, Checkpoint("a", 1)}, {5, Released()}, {8, Checkpoint("b", 2)}});
  EpochTable::Neighbours n = t.PinnedNeighbours(Epoch(5));
  EXPECT_EQ(n.prev, 2u);
  EXPECT_EQ(n.next, 8u);
  n = t.PinnedNeighbours(Epoch(8));  // itself does not count
  EXPECT_EQ(n.prev, 2u);
  EXPECT_EQ(n.next, 20u);
  n = t.PinnedNeighbours(Epoch(2));
  EXPECT_EQ(n.prev, 0u);
  EXPECT_EQ(n.next, 8u);
}

TEST(EpochTableTest, ForgetIfUnpinnedKeepsAnEpochPinnedAgainMeanwhile) {
  EpochTable t;
  t.Restore(Epoch(20), {{5, Released()}, {6, Released(1)}});
  t.ForgetIfUnpinned(Epoch(5));
  t.ForgetIfUnpinned(Epoch(6));
  EXPECT_TRUE(t.ReleasedUnpinned().empty());
  EXPECT_TRUE(t.PinnedIn(Epoch(6), Epoch(6)));
  EXPECT_EQ(t.Set(Epoch(5), Released()), std::nullopt);  // 5 was gone
}

}  // namespace
}  // namespace archil::engine
