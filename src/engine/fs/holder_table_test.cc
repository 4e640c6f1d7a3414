#include "engine/fs/holder_table.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace archil::engine {
namespace {

TEST(HolderTableTest, AnInodeIsHeldUntilItsLastReferenceGoes) {
  HolderTable t;
  t.Add(Ino(5), 1);
  t.Add(Ino(5), 1);
  t.Add(Ino(5), 2);
  EXPECT_EQ(t.Of(Ino(5)), (std::vector<uint64_t>{1, 2}));
  EXPECT_FALSE(*t.Remove(Ino(5), 1));
  EXPECT_FALSE(*t.Remove(Ino(5), 2));
  EXPECT_EQ(t.Of(Ino(5)), (std::vector<uint64_t>{1}));
  EXPECT_TRUE(*t.Remove(Ino(5), 1));  // the last reference
  EXPECT_TRUE(t.Of(Ino(5)).empty());
}

TEST(HolderTableTest, ReleasingWhatIsNotHeldIsEinvalAndChangesNothing) {
  HolderTable t;
  EXPECT_EQ(t.Remove(Ino(5), 1).status().sys_errno(), EINVAL);
  t.Add(Ino(5), 1);
  EXPECT_EQ(t.Remove(Ino(5), 2).status().sys_errno(), EINVAL);
  EXPECT_EQ(t.Of(Ino(5)), (std::vector<uint64_t>{1}));
}

TEST(HolderTableTest, DroppingAHolderReleasesOnlyWhatNoOtherHolds) {
  HolderTable t;
  t.Add(Ino(5), 1);
  t.Add(Ino(5), 1);
  t.Add(Ino(6), 1);
  t.Add(Ino(6), 2);
  t.Add(Ino(7), 2);
  EXPECT_EQ(t.DropHolder(1), (std::vector<Ino>{Ino(5)}));
  EXPECT_TRUE(t.Of(Ino(5)).empty());
  EXPECT_EQ(t.Of(Ino(6)), (std::vector<uint64_t>{2}));
  EXPECT_TRUE(t.DropHolder(1).empty());
  EXPECT_EQ(t.DropHolder(2), (std::vector<Ino>{Ino(6), Ino(7)}));
}

TEST(HolderTableTest, RestoredHoldersHoldOnceEach) {
  HolderTable t;
  t.Restore(Ino(9), {3, 4});
  EXPECT_EQ(t.Of(Ino(9)), (std::vector<uint64_t>{3, 4}));
  EXPECT_FALSE(*t.Remove(Ino(9), 3));
  EXPECT_TRUE(*t.Remove(Ino(9), 4));
}

}  // namespace
}  // namespace archil::engine
