// LastNames: only the only name of an inode is kept; a LINK's invalidation wins over an
// answer that may predate it; renames move entries; the memory bound.
#include "fs/last_names.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace archil::fs {
namespace {

using posix::Ino;

posix::Attr File(uint64_t ino, uint32_t nlink = 1, uint32_t type = S_IFREG) {
  posix::Attr a;
  a.ino = Ino(ino);
  a.mode = type | 0644;
  a.nlink = nlink;
  return a;
}

TEST(LastNames, KeepsTheOnlyNameOfAnInode) {
  LastNames n;
  n.Saw(Ino(1), "f", File(10), n.Generation());
  n.Saw(Ino(1), "l", File(11, 1, S_IFLNK), n.Generation());
  n.Saw(Ino(1), "two", File(12, 2), n.Generation());
  n.Saw(Ino(1), "d", File(13, 1, S_IFDIR), n.Generation());
  EXPECT_EQ(n.Find(Ino(1), "f"), (LastNames::Named{Ino(10), false}));
  EXPECT_EQ(n.Find(Ino(1), "l"), (LastNames::Named{Ino(11), false}));
  EXPECT_EQ(n.Find(Ino(1), "two"), std::nullopt) << "another name may remain";
  EXPECT_EQ(n.Find(Ino(1), "d"), (LastNames::Named{Ino(13), true})) << "a directory has one name";
  EXPECT_EQ(n.Find(Ino(2), "f"), std::nullopt) << "found by directory and name";
  // A later answer that shows another name forgets the entry.
  n.Saw(Ino(1), "f", File(10, 2), n.Generation());
  EXPECT_EQ(n.Find(Ino(1), "f"), std::nullopt);
  n.Saw(Ino(1), "f", File(10), n.Generation());
  n.Forget(Ino(1), "f");
  EXPECT_EQ(n.Find(Ino(1), "f"), std::nullopt);
}

TEST(LastNames, ALinkForgetsItsInodeAndEveryAnswerBegunBefore) {
  LastNames n;
  n.Saw(Ino(1), "f", File(10), n.Generation());
  n.Saw(Ino(1), "g", File(11), n.Generation());
  const uint64_t before = n.Generation();
  n.Linking(Ino(10));  // a LINK is sent: f's inode gets a second name
  EXPECT_EQ(n.Find(Ino(1), "f"), std::nullopt);
  EXPECT_EQ(n.Find(Ino(1), "g"), (LastNames::Named{Ino(11), false}))
      << "another inode's entry stays";
  n.Saw(Ino(1), "f", File(10), before);  // a LOOKUP answered before the LINK applied
  EXPECT_EQ(n.Find(Ino(1), "f"), std::nullopt);
  n.Saw(Ino(1), "f", File(10), n.Generation());
  EXPECT_EQ(n.Find(Ino(1), "f"), (LastNames::Named{Ino(10), false}));
}

TEST(LastNames, AnInodeHasOneEntry) {
  LastNames n;
  n.Saw(Ino(1), "f", File(10), n.Generation());
  n.Saw(Ino(2), "moved", File(10), n.Generation());  // seen under a new name: it was moved
  EXPECT_EQ(n.Find(Ino(1), "f"), std::nullopt);
  EXPECT_EQ(n.Find(Ino(2), "moved"), (LastNames::Named{Ino(10), false}));
  n.Linking(Ino(10));
  EXPECT_EQ(n.Find(Ino(2), "moved"), std::nullopt);
  EXPECT_EQ(n.size(), 0u);
}

TEST(LastNames, ARenameMovesTheEntryAndReplacesTheTarget) {
  LastNames n;
  n.Saw(Ino(1), "a", File(10), n.Generation());
  n.Saw(Ino(2), "b", File(11), n.Generation());
  n.Moved(Ino(1), "a", Ino(2), "b");
  EXPECT_EQ(n.Find(Ino(1), "a"), std::nullopt);
  EXPECT_EQ(n.Find(Ino(2), "b"), (LastNames::Named{Ino(10), false}));
  // A source not kept (a directory, say) still replaces what the target named.
  n.Moved(Ino(1), "dir", Ino(2), "b");
  EXPECT_EQ(n.Find(Ino(2), "b"), std::nullopt);
}

TEST(LastNames, PastTheBoundEveryEntryIsForgotten) {
  LastNames n(3);
  for (uint64_t i = 0; i < 3; ++i) n.Saw(Ino(1), std::to_string(i), File(10 + i), n.Generation());
  EXPECT_EQ(n.size(), 3u);
  n.Saw(Ino(1), "0", File(20), n.Generation());  // the same name again: no growth
  EXPECT_EQ(n.size(), 3u);
  n.Saw(Ino(1), "3", File(13), n.Generation());
  EXPECT_EQ(n.size(), 1u);
  EXPECT_EQ(n.Find(Ino(1), "3"), (LastNames::Named{Ino(13), false}));
  EXPECT_EQ(n.Find(Ino(1), "1"), std::nullopt);
}

}  // namespace
}  // namespace archil::fs
