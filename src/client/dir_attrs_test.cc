// DirAttrs: a directory's attributes are kept only from the answer to a change that was alone in
// flight, and dropped when the next change is sent or the directory is removed or moved.
#include "client/dir_attrs.h"

#include <gtest/gtest.h>

namespace archil::client {
namespace {

using posix::Ino;

posix::Attr DirAttr(uint64_t ino, uint32_t nlink) {
  posix::Attr a;
  a.ino = Ino(ino);
  a.mode = 040755;
  a.nlink = nlink;
  return a;
}

TEST(DirAttrs, TheAnswerToALoneChangeIsKeptUntilTheNextChangeIsSent) {
  DirAttrs d;
  EXPECT_FALSE(d.Get(Ino(7)));
  uint64_t t = d.Changing(Ino(7));
  EXPECT_FALSE(d.Get(Ino(7)));
  d.Changed(Ino(7), t, DirAttr(7, 3));
  ASSERT_TRUE(d.Get(Ino(7)));
  EXPECT_EQ(d.Get(Ino(7))->nlink, 3u);
  uint64_t t2 = d.Changing(Ino(7));
  EXPECT_FALSE(d.Get(Ino(7)));          // the change may be applied before its answer comes
  d.Changed(Ino(7), t2, std::nullopt);  // failed, or its answer carried nothing
  EXPECT_FALSE(d.Get(Ino(7)));
  EXPECT_EQ(d.size(), 0u);
}

// A directory made by MKDIR is known from its answer, until its first change is sent; a file's
// attributes, or an inode already kept or changing, are not taken from a creation.
TEST(DirAttrs, ANewDirectoryIsKnownFromItsMkdirUntilItsFirstChange) {
  DirAttrs d;
  d.Created(DirAttr(9, 2));
  ASSERT_TRUE(d.Get(Ino(9)));
  EXPECT_EQ(d.Get(Ino(9))->nlink, 2u);
  uint64_t t = d.Changing(Ino(9));
  EXPECT_FALSE(d.Get(Ino(9)));
  d.Changed(Ino(9), t, DirAttr(9, 3));
  EXPECT_EQ(d.Get(Ino(9))->nlink, 3u);
  d.Created(DirAttr(9, 2));  // what is kept stays
  EXPECT_EQ(d.Get(Ino(9))->nlink, 3u);
  const uint64_t changing = d.Changing(Ino(5));
  d.Created(DirAttr(5, 2));  // a change in flight: nothing is kept
  EXPECT_FALSE(d.Get(Ino(5)));
  d.Changed(Ino(5), changing, std::nullopt);
  posix::Attr file = DirAttr(6, 1);
  file.mode = 0100644;
  d.Created(file);
  EXPECT_FALSE(d.Get(Ino(6)));
}

TEST(DirAttrs, OverlappingChangesKeepNothingWhateverOrderTheyAreAnsweredIn) {
  for (bool first_answered_first : {true, false}) {
    DirAttrs d;
    uint64_t a = d.Changing(Ino(7));
    uint64_t b = d.Changing(Ino(7));
    if (first_answered_first) {
      d.Changed(Ino(7), a, DirAttr(7, 3));
      d.Changed(Ino(7), b, DirAttr(7, 4));
    } else {
      d.Changed(Ino(7), b, DirAttr(7, 4));
      d.Changed(Ino(7), a, DirAttr(7, 3));
    }
    EXPECT_FALSE(d.Get(Ino(7))) << first_answered_first;
    // The next lone change is kept again.
    uint64_t c = d.Changing(Ino(7));
    d.Changed(Ino(7), c, DirAttr(7, 5));
    ASSERT_TRUE(d.Get(Ino(7)));
    EXPECT_EQ(d.Get(Ino(7))->nlink, 5u);
  }
}

TEST(DirAttrs, AnAnswerAboutAnotherInodeIsNotKept) {
  DirAttrs d;
  d.Changed(Ino(7), d.Changing(Ino(7)), DirAttr(8, 2));  // a server's bad reply
  EXPECT_FALSE(d.Get(Ino(7)));
  EXPECT_FALSE(d.Get(Ino(8)));
  EXPECT_EQ(d.size(), 0u);
}

TEST(DirAttrs, ARemovedOrMovedDirectoryIsForgottenEvenWithAChangeInFlight) {
  DirAttrs d;
  uint64_t t = d.Changing(Ino(7));
  d.Changed(Ino(7), t, DirAttr(7, 2));
  d.Forget(Ino(7));
  EXPECT_FALSE(d.Get(Ino(7)));
  uint64_t u = d.Changing(Ino(7));
  d.Forget(Ino(7));
  d.Changed(Ino(7), u, DirAttr(7, 2));
  EXPECT_FALSE(d.Get(Ino(7)));
  EXPECT_EQ(d.size(), 0u);
}

TEST(DirAttrs, PastTheBoundIdleEntriesGoAndChangesInFlightStayCounted) {
  DirAttrs d(/*max_inodes=*/2);
  for (uint64_t ino : {1, 2}) d.Changed(Ino(ino), d.Changing(Ino(ino)), DirAttr(ino, 2));
  EXPECT_EQ(d.size(), 2u);
  uint64_t in_flight = d.Changing(Ino(3));  // drops 1 and 2
  EXPECT_FALSE(d.Get(Ino(1)));
  EXPECT_FALSE(d.Get(Ino(2)));
  d.Changed(Ino(1), d.Changing(Ino(1)), DirAttr(1, 2));
  uint64_t overlapping = d.Changing(Ino(3));  // drops 1; 3 stays, two changes in flight
  d.Changed(Ino(3), in_flight, DirAttr(3, 2));
  d.Changed(Ino(3), overlapping, DirAttr(3, 3));
  EXPECT_FALSE(d.Get(Ino(3)));
}

TEST(DirAttrs, ADirChangeNotDoneIsAChangeAnsweredWithNothing) {
  DirAttrs d;
  d.Changed(Ino(7), d.Changing(Ino(7)), DirAttr(7, 2));
  {
    DirChange c(&d, Ino(7));
    EXPECT_FALSE(d.Get(Ino(7)));
  }
  EXPECT_FALSE(d.Get(Ino(7)));
  {
    DirChange c(&d, Ino(7));
    c.Done(DirAttr(7, 9));
  }
  ASSERT_TRUE(d.Get(Ino(7)));
  EXPECT_EQ(d.Get(Ino(7))->nlink, 9u);
  DirChange off(nullptr, Ino(7));  // no DirAttrs: does nothing
  off.Done(DirAttr(7, 1));
  EXPECT_EQ(d.Get(Ino(7))->nlink, 9u);
}

// A create the client answered itself stamps a kept directory's times; a directory not kept, or
// with a change in flight (whose answer must not be kept either), is not stamped.
TEST(DirAttrs, ACreateAnsweredByTheClientStampsAKeptDirectory) {
  DirAttrs d;
  EXPECT_FALSE(d.Touch(Ino(7), posix::Timespec{50, 5}));
  d.Changed(Ino(7), d.Changing(Ino(7)), DirAttr(7, 2));
  std::optional<posix::Attr> a = d.Touch(Ino(7), posix::Timespec{50, 5});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->mtime, (posix::Timespec{50, 5}));
  EXPECT_EQ(a->ctime, (posix::Timespec{50, 5}));
  EXPECT_EQ(d.Get(Ino(7)), a);
  const uint64_t t = d.Changing(Ino(7));
  EXPECT_FALSE(d.Touch(Ino(7), posix::Timespec{60, 0}));
  d.Changed(Ino(7), t, DirAttr(7, 2));
  EXPECT_FALSE(d.Get(Ino(7))) << "the change's answer predates the create";
}

}  // namespace
}  // namespace archil::client
