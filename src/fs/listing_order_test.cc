// ListingOrder: files begun in the order their directory was listed name the files after them
// once each, within the window; anything out of order, out of date or over the bounds names none.
#include "fs/listing_order.h"

#include <gtest/gtest.h>

#include <vector>

namespace archil::fs {
namespace {

using posix::Ino;

constexpr Ino kDir{5};

// Entries 100.. (inode numbers; `first` is added) at offsets 10.., of the given sizes; -1 is a
// directory.
std::vector<ListingOrder::Entry> Page(uint64_t first, const std::vector<int64_t>& sizes) {
  std::vector<ListingOrder::Entry> page;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const uint64_t n = first + i;
    const bool dir = sizes[i] < 0;
    page.push_back({10 + n, dir ? ListingOrder::Kind::kDir : ListingOrder::Kind::kFile,
                    Ino(100 + n), dir ? 0 : uint64_t(sizes[i])});
  }
  return page;
}

std::vector<uint64_t> Inos(const std::vector<ListingOrder::File>& files) {
  std::vector<uint64_t> out;
  for (const ListingOrder::File& f : files) out.push_back(f.ino.value());
  return out;
}

using V = std::vector<uint64_t>;

TEST(ListingOrder, FilesBegunInOrderNameTheNextOnesOnce) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 3});
  order.Listed(kDir, 0, Page(0, std::vector<int64_t>(8, 100)), true);
  EXPECT_EQ(Inos(order.Began(Ino(100))), (V{101, 102, 103}));
  EXPECT_EQ(Inos(order.Began(Ino(101))), (V{104}));  // three files ahead at most
  EXPECT_EQ(Inos(order.Began(Ino(102))), (V{105}));
  // Begun again: not in order (the reader went back), nothing named.
  EXPECT_TRUE(order.Began(Ino(102)).empty());
  EXPECT_TRUE(order.Began(Ino(101)).empty());
}

TEST(ListingOrder, AReaderThatStartsElsewhereIsInOrderFromItsSecondFile) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 2});
  order.Listed(kDir, 0, Page(0, std::vector<int64_t>(8, 100)), true);
  EXPECT_TRUE(order.Began(Ino(104)).empty());  // not the first file: one random open
  EXPECT_EQ(Inos(order.Began(Ino(105))), (V{106, 107}));
  EXPECT_TRUE(order.Began(Ino(999)).empty());  // never listed
}

TEST(ListingOrder, EmptyAndLargeFilesAreSkippedAndBytesBoundTheWindow) {
  ListingOrder order(
      ListingOrderLimits{.files_ahead = 6, .bytes_ahead = 1000, .max_file_bytes = 500});
  // 100: begun; 101 empty, 102 a directory never listed, 103 over the file bound, 104 and 105
  // fit, 106 would pass the byte bound.
  order.Listed(kDir, 0, Page(0, {10, 0, -1, 600, 400, 500, 200, 10}), true);
  EXPECT_EQ(Inos(order.Began(Ino(100))), (V{104, 105}));
  // In order (an empty file and a directory between), not returned but too big to be: the window
  // stays, and has 100 bytes left.
  EXPECT_TRUE(order.Began(Ino(103)).empty());
  EXPECT_EQ(Inos(order.Began(Ino(104))), (V{106, 107}));
}

TEST(ListingOrder, EmptyFilesBetweenTwoBegunKeepTheOrder) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 2});
  order.Listed(kDir, 0, Page(0, {10, 0, 0, 10, 10, 10, 10, 10}), true);
  EXPECT_EQ(Inos(order.Began(Ino(100))), (V{103, 104}));
  // 101 and 102 were read without a READ: 103 follows 100.
  EXPECT_EQ(Inos(order.Began(Ino(103))), (V{105}));
}

TEST(ListingOrder, TheWalkEntersListedSubdirectoriesWhereTheyAreListed) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 8});
  order.Listed(kDir, 0, Page(0, {10, -1, 10, 10}), true);    // 100, dir 101, 102, 103
  order.Listed(Ino(101), 0, Page(100, {10, 10, 10}), true);  // 200, 201, 202
  // Depth first: the subdirectory's files before the files listed after it.
  EXPECT_EQ(Inos(order.Began(Ino(100))), (V{200, 201, 202, 102, 103}));
  EXPECT_TRUE(order.Began(Ino(200)).empty());  // everything was returned once
}

TEST(ListingOrder, AWalkStoppedInASubdirectoryGoesOnThereAndThenInItsParent) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 2});
  order.Listed(kDir, 0, Page(0, {10, -1, 10, 10}), true);
  order.Listed(Ino(101), 0, Page(100, {10, 10, 10}), true);
  EXPECT_EQ(Inos(order.Began(Ino(100))), (V{200, 201}));
  EXPECT_EQ(Inos(order.Began(Ino(200))), (V{202}));
  EXPECT_EQ(Inos(order.Began(Ino(201))), (V{102}));  // up into the parent, after the directory
  EXPECT_EQ(Inos(order.Began(Ino(202))), (V{103}));
  EXPECT_TRUE(order.Began(Ino(102)).empty());
}

TEST(ListingOrder, ADirectoryListedAfterTheWalkPassedItGetsTheWholeWindow) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 2});
  order.Listed(kDir, 0, Page(0, {10, -1, 10, 10}), true);
  EXPECT_EQ(Inos(order.Began(Ino(100))), (V{102, 103}));  // 101 not listed: passed
  order.Listed(Ino(101), 0, Page(100, {10, 10, 10}), true);
  // The reader enters it: not where the walk said, so the window is given to it.
  EXPECT_EQ(Inos(order.Began(Ino(200))), (V{201, 202}));
}

TEST(ListingOrder, BeginningAFileReturnedInAnOlderWindowOpensNoNewOne) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 2});
  order.Listed(kDir, 0, Page(0, {10, 10, 10, 10, 10}), true);
  order.Listed(Ino(6), 0, Page(100, {10, 10, 10}), true);
  EXPECT_EQ(Inos(order.Began(Ino(100))), (V{101, 102}));
  // Another reader, elsewhere: a new window.
  EXPECT_EQ(Inos(order.Began(Ino(200))), (V{201, 202}));
  // The first reader's next file was returned (in the older window): no wrong guess, so no new
  // window, and the current one is full. (A new window at each such file would read ahead
  // without bound while two readers alternate.)
  EXPECT_TRUE(order.Began(Ino(101)).empty());
  EXPECT_TRUE(order.Began(Ino(201)).empty());        // the end of its directory
  EXPECT_EQ(Inos(order.Began(Ino(102))), (V{103}));  // 202 is the window's one file ahead
}

TEST(ListingOrder, OnlyPagesThatContinueTheRecordedListingExtendIt) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 8});
  order.Listed(kDir, 0, Page(0, {1, 1}), false);
  order.Listed(kDir, 99, Page(5, {1, 1}), false);  // not where the record ended: ignored
  EXPECT_EQ(order.entries(), 2u);
  order.Listed(kDir, 11, Page(2, {1, 1}), true);  // after entry 1 (offset 11)
  EXPECT_EQ(order.entries(), 4u);
  order.Listed(kDir, 13, Page(4, {1}), true);  // past the end: ignored
  EXPECT_EQ(order.entries(), 4u);
  EXPECT_EQ(Inos(order.Began(Ino(100))), (V{101, 102, 103}));
  // A listing from the start again replaces the record.
  order.Listed(kDir, 0, Page(7, {1}), true);
  EXPECT_EQ(order.entries(), 1u);
  EXPECT_TRUE(order.Began(Ino(101)).empty());
  // A page of a directory whose start was never recorded is ignored.
  order.Listed(Ino(6), 40, Page(0, {1}), true);
  EXPECT_EQ(order.entries(), 1u);
}

TEST(ListingOrder, PastItsBoundEverythingIsForgotten) {
  ListingOrder order(ListingOrderLimits{.max_entries = 4});
  order.Listed(kDir, 0, Page(0, {1, 1, 1}), true);
  order.Listed(Ino(6), 0, Page(10, {1}), true);
  EXPECT_EQ(order.entries(), 4u);
  order.Listed(Ino(7), 0, Page(20, {1}), true);
  EXPECT_LE(order.entries(), 4u);
  EXPECT_TRUE(order.Began(Ino(100)).empty());
}

}  // namespace
}  // namespace archil::fs
