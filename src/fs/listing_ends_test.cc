// ListingEnds: an end answers one READDIR at its offset, and only with no change of names since
// its READDIR began.
#include "fs/listing_ends.h"

#include <gtest/gtest.h>

namespace archil::fs {
namespace {

using posix::Ino;

TEST(ListingEnds, AnEndAnswersTheNextReadAtItsOffsetOnce) {
  ListingEnds e;
  EXPECT_FALSE(e.TakeEnd(Ino(5), 40)) << "nothing recorded";
  e.Ended(Ino(5), 40, e.Changes());
  EXPECT_FALSE(e.TakeEnd(Ino(6), 40)) << "another directory";
  EXPECT_TRUE(e.TakeEnd(Ino(5), 40));
  EXPECT_FALSE(e.TakeEnd(Ino(5), 40)) << "used once";
  e.Ended(Ino(5), 40, e.Changes());
  EXPECT_FALSE(e.TakeEnd(Ino(5), 39)) << "another offset: asked of the disk, and forgotten";
  EXPECT_FALSE(e.TakeEnd(Ino(5), 40));
}

TEST(ListingEnds, AChangeOfNamesDuringOrAfterTheReadDropsTheEnd) {
  ListingEnds e;
  const uint64_t before = e.Changes();
  {
    ChangingNames change(&e);  // a create while the READDIR is in flight
  }
  e.Ended(Ino(5), 40, before);
  EXPECT_FALSE(e.TakeEnd(Ino(5), 40)) << "the create may be past the end";
  e.Ended(Ino(5), 40, e.Changes());
  {
    ChangingNames change(&e);  // an unlink after it
  }
  EXPECT_FALSE(e.TakeEnd(Ino(5), 40));
  e.Ended(Ino(5), 40, e.Changes());
  ChangingNames begun(&e);  // begun, not yet answered
  EXPECT_FALSE(e.TakeEnd(Ino(5), 40));
}

TEST(ListingEnds, PastTheBoundEveryEndIsForgotten) {
  ListingEnds e(2);
  e.Ended(Ino(1), 10, e.Changes());
  e.Ended(Ino(2), 10, e.Changes());
  e.Ended(Ino(3), 10, e.Changes());
  EXPECT_FALSE(e.TakeEnd(Ino(1), 10));
  EXPECT_TRUE(e.TakeEnd(Ino(3), 10));
}

}  // namespace
}  // namespace archil::fs
