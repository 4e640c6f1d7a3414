// KnownNames: the superset contract (a name that may exist is never reported absent), under
// requests in flight and the memory bound.
#include "fs/known_names.h"

#include <gtest/gtest.h>

namespace archil::fs {
namespace {

using posix::Ino;

TEST(KnownNames, OnlyDirectoriesThisMountCreatedAreKnown) {
  KnownNames k;
  EXPECT_FALSE(k.Absent(Ino(5), "x"));  // never created here: ask the disk
  k.Created(Ino(5));
  EXPECT_TRUE(k.Absent(Ino(5), "x"));
  EXPECT_FALSE(k.Absent(Ino(6), "x"));
}

TEST(KnownNames, ANameMayExistFromBeforeItsRequestUntilItsRemovalIsAnswered) {
  KnownNames k;
  k.Created(Ino(5));
  {
    AddingName adding(&k, Ino(5), "x");
    EXPECT_TRUE(adding.absent()) << "absent before: a create may be answered without the disk";
    EXPECT_FALSE(k.Absent(Ino(5), "x"));  // while the create is in flight
    AddingName again(&k, Ino(5), "x");
    EXPECT_FALSE(again.absent());
    AddingName elsewhere(&k, Ino(6), "x");
    EXPECT_FALSE(elsewhere.absent()) << "a directory not known";
  }
  EXPECT_FALSE(k.Absent(Ino(5), "x"));  // created (or failed: either way, ask)
  EXPECT_TRUE(k.Absent(Ino(5), "y"));
  k.Removed(Ino(5), "x");
  EXPECT_TRUE(k.Absent(Ino(5), "x"));
  EXPECT_EQ(k.names(), 0u);
}

// Empty (an rmdir the mount may answer): known, and no name in it nor being added.
TEST(KnownNames, ADirectoryIsEmptyOnlyWhenNoNameMayBeInIt) {
  KnownNames k;
  EXPECT_FALSE(k.Empty(Ino(5))) << "never created here";
  k.Created(Ino(5));
  EXPECT_TRUE(k.Empty(Ino(5)));
  {
    AddingName adding(&k, Ino(5), "x");
    EXPECT_FALSE(k.Empty(Ino(5))) << "a create in flight";
  }
  EXPECT_FALSE(k.Empty(Ino(5)));
  k.Removed(Ino(5), "x");
  EXPECT_TRUE(k.Empty(Ino(5)));
}

TEST(KnownNames, ARemovalAnsweredWhileTheNameIsBeingAddedAgainKeepsIt) {
  KnownNames k;
  k.Created(Ino(5));
  { AddingName first(&k, Ino(5), "x"); }
  // unlink(x) answered at the disk; before its answer is recorded, a create of x is sent.
  k.Adding(Ino(5), "x");
  k.Removed(Ino(5), "x");
  EXPECT_FALSE(k.Absent(Ino(5), "x"));
  k.Added(Ino(5), "x");
  EXPECT_FALSE(k.Absent(Ino(5), "x"));  // the create may have made it
}

TEST(KnownNames, PastTheBoundEveryDirectoryIsForgotten) {
  KnownNames k(/*max_names=*/3);
  k.Created(Ino(5));
  k.Created(Ino(6));
  { AddingName a(&k, Ino(5), "a"); }
  { AddingName b(&k, Ino(5), "b"); }
  { AddingName c(&k, Ino(6), "c"); }
  EXPECT_EQ(k.names(), 3u);
  EXPECT_TRUE(k.Absent(Ino(6), "z"));
  { AddingName d(&k, Ino(6), "d"); }
  EXPECT_EQ(k.dirs(), 0u);
  EXPECT_EQ(k.names(), 0u);
  EXPECT_FALSE(k.Absent(Ino(5), "z"));
  EXPECT_FALSE(k.Absent(Ino(6), "z"));
}

TEST(KnownNames, AddingTheSameNameTwiceCountsItOnce) {
  KnownNames k;
  k.Created(Ino(5));
  k.Adding(Ino(5), "x");
  k.Adding(Ino(5), "x");
  k.Added(Ino(5), "x");
  k.Removed(Ino(5), "x");  // one request still in flight
  EXPECT_FALSE(k.Absent(Ino(5), "x"));
  k.Added(Ino(5), "x");
  k.Removed(Ino(5), "x");
  EXPECT_TRUE(k.Absent(Ino(5), "x"));
  EXPECT_EQ(k.names(), 0u);
}

}  // namespace
}  // namespace archil::fs
