// ListingOrder: files begun in the order their directory was listed name the files after them
// once each, within the window; anything out of order, out of date or over the bounds names none.
#include "fs/listing_order.h"

#include <gtest/gtest.h>

#include <vector>

namespace archil::fs {
namespace {

using posix::Ino;

constexpr Ino kDir{5};

// Files 100.. (inode numbers) at offsets 10.., with the given sizes; entries with a size of -1
// are directories.
std::vector<ListingOrder::Entry> Page(uint64_t first, const std::vector<int64_t>& sizes) {
  std::vector<ListingOrder::Entry> page;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const uint64_t n = first + i;
    const bool file = sizes[i] >= 0;
    page.push_back({10 + n, file, {Ino(100 + n), file ? uint64_t(sizes[i]) : 0}});
  }
  return page;
}

std::vector<uint64_t> Inos(const std::vector<ListingOrder::File>& files) {
  std::vector<uint64_t> out;
  for (const ListingOrder::File& f : files) out.push_back(f.ino.value());
  return out;
}

TEST(ListingOrder, FilesBegunInOrderNameTheNextOnesOnce) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 3});
  order.Listed(kDir, 0, Page(0, std::vector<int64_t>(8, 100)));
  EXPECT_EQ(Inos(order.Began(Ino(100))), (std::vector<uint64_t>{101, 102, 103}));
  EXPECT_EQ(Inos(order.Began(Ino(101))), (std::vector<uint64_t>{104}));
  EXPECT_EQ(Inos(order.Began(Ino(102))), (std::vector<uint64_t>{105}));
  // Begun again: not in order (the reader went back), nothing named.
  EXPECT_TRUE(order.Began(Ino(102)).empty());
  EXPECT_TRUE(order.Began(Ino(101)).empty());
}

TEST(ListingOrder, AReaderThatStartsElsewhereIsInOrderFromItsSecondFile) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 2});
  order.Listed(kDir, 0, Page(0, std::vector<int64_t>(8, 100)));
  EXPECT_TRUE(order.Began(Ino(104)).empty());  // not the first file: one random open
  EXPECT_EQ(Inos(order.Began(Ino(105))), (std::vector<uint64_t>{106, 107}));
  EXPECT_TRUE(order.Began(Ino(999)).empty());  // never listed
}

TEST(ListingOrder, EmptyLargeFilesAndDirectoriesAreSkippedAndBytesBoundTheWindow) {
  ListingOrder order(
      ListingOrderLimits{.files_ahead = 6, .bytes_ahead = 1000, .max_file_bytes = 500});
  // 100: begun; 101 empty, 102 a directory, 103 over the file bound, 104 and 105 fit, 106 would
  // pass the byte bound.
  order.Listed(kDir, 0, Page(0, {10, 0, -1, 600, 400, 500, 200, 10}));
  EXPECT_EQ(Inos(order.Began(Ino(100))), (std::vector<uint64_t>{104, 105}));
  // In order: 101 is empty (read without a READ) and directories are not recorded. The window
  // ahead of it is full.
  EXPECT_TRUE(order.Began(Ino(103)).empty());
  EXPECT_EQ(Inos(order.Began(Ino(104))), (std::vector<uint64_t>{106, 107}));
}

TEST(ListingOrder, EmptyFilesBetweenTwoBegunKeepTheOrder) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 2});
  order.Listed(kDir, 0, Page(0, {10, 0, 0, 10, 10, 10, 10, 10}));
  EXPECT_TRUE(order.Began(Ino(100)).empty());  // the two files after it are empty
  // 101 and 102 were read without a READ: 103 follows 100.
  EXPECT_EQ(Inos(order.Began(Ino(103))), (std::vector<uint64_t>{104, 105}));
}

TEST(ListingOrder, OnlyPagesThatContinueTheRecordedListingExtendIt) {
  ListingOrder order(ListingOrderLimits{.files_ahead = 8});
  order.Listed(kDir, 0, Page(0, {1, 1}));
  order.Listed(kDir, 99, Page(5, {1, 1}));  // not where the record ended: ignored
  EXPECT_EQ(order.entries(), 2u);
  order.Listed(kDir, 11, Page(2, {1, 1}));  // after entry 1 (offset 11)
  EXPECT_EQ(order.entries(), 4u);
  EXPECT_EQ(Inos(order.Began(Ino(100))), (std::vector<uint64_t>{101, 102, 103}));
  // A listing from the start again replaces the record.
  order.Listed(kDir, 0, Page(7, {1}));
  EXPECT_EQ(order.entries(), 1u);
  EXPECT_TRUE(order.Began(Ino(101)).empty());
  // A page of a directory whose start was never recorded is ignored.
  order.Listed(Ino(6), 40, Page(0, {1}));
  EXPECT_EQ(order.entries(), 1u);
}

TEST(ListingOrder, PastItsBoundEverythingIsForgotten) {
  ListingOrder order(ListingOrderLimits{.max_entries = 4});
  order.Listed(kDir, 0, Page(0, {1, 1, 1}));
  order.Listed(Ino(6), 0, Page(10, {1}));
  EXPECT_EQ(order.entries(), 4u);
  order.Listed(Ino(7), 0, Page(20, {1}));
  EXPECT_LE(order.entries(), 4u);
  EXPECT_TRUE(order.Began(Ino(100)).empty());
}

}  // namespace
}  // namespace archil::fs
