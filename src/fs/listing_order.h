// ListingOrder: the order in which the disk listed each directory, so that files read one after
// another in that order (`cat` of what `find` printed, `grep -r`, `tar c`, `cp -r`) are read ahead
// of their reader (ReadAhead::Prefetch, docs/semantics.md §5.11).
//
// Listings are recorded page by page from READDIRPLUS answers, whose attributes give each file's
// size: a page at the listing's start begins the directory's record again, a page that continues
// where the recorded ones ended extends it, any other page is ignored. Regular files and
// directories are kept, in their order; a directory's record knows its place in its parent's.
//
// Began(ino) is told of every file whose reading begins (a READ at offset 0). The file is read in
// order when it is the first file its directory listed, or comes after the file begun before it
// there with only empty files (reading one sends no READ) and directories between them. For a
// file read in order, Began returns the files a reader walking the tree depth first (as `find`
// and `tar c` do) reads next and no earlier call returned: the rest of its directory, entering
// each subdirectory whose listing is recorded where it is listed, and, once the directory's
// recorded listing is complete, the entries after it in its parent's. Empty files and files over
// `max_file_bytes` are skipped (the second get the read-ahead of a file read in order once their
// reader begins them). Files returned and not yet begun are at most `files_ahead`, of at most
// `bytes_ahead` bytes in all, counted in the current window: a file begun out of order, or in
// order but not returned when the walk would have (a directory listed after the walk passed it),
// opens a new window, so that a wrong guess never holds the read-ahead back. Files returned in
// an older window are still known as returned: beginning one later is no wrong guess.
//
// Nothing here is a promise about data: a record out of date (a name changed since) only makes a
// read ahead useless, never wrong (ReadAhead keeps what it reads coherent with this mount's
// changes).
//
// Bounded: at most `max_entries` entries recorded in all; past it everything is forgotten.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "posix/types.h"

namespace archil::fs {

struct ListingOrderLimits {
  size_t files_ahead = 8;
  uint64_t bytes_ahead = 4 << 20;
  uint64_t max_file_bytes = 1 << 20;
  size_t max_entries = size_t{1} << 16;
};

class ListingOrder {
 public:
  struct File {
    posix::Ino ino;
    uint64_t size = 0;
  };
  enum class Kind { kOther, kFile, kDir };
  // One entry of a listing's page, as the disk gave it: `offset` is where the listing resumes
  // after it; `size` matters for a file.
  struct Entry {
    uint64_t offset = 0;
    Kind kind = Kind::kOther;
    posix::Ino ino;
    uint64_t size = 0;
  };

  explicit ListingOrder(ListingOrderLimits limits = {}) : limits_(limits) {}

  // A page of `dir`'s listing, asked for after `offset` (0: from the start); `eof`: the listing
  // ends with it.
  void Listed(posix::Ino dir, uint64_t offset, const std::vector<Entry>& page, bool eof)
      ARCHIL_EXCLUDES(mu_);
  // The reading of `ino` begins; returns the files to read ahead of its reader (see above).
  std::vector<File> Began(posix::Ino ino) ARCHIL_EXCLUDES(mu_);

  size_t entries() const ARCHIL_EXCLUDES(mu_);

 private:
  struct Item {
    posix::Ino ino;
    uint64_t size = 0;
    bool dir = false;
  };
  struct Listing {
    std::vector<Item> items;
    uint64_t end = 0;       // the offset after the last entry recorded
    bool complete = false;  // the last page recorded ended the listing
    size_t next = 0;        // the index a file read in order has (one past the last begun)
    size_t ahead_end = 0;   // items before this index were walked by Collect
  };
  struct Place {
    uint64_t dir = 0;
    size_t index = 0;
  };
  // What Collect may still return.
  struct Budget {
    size_t files = 0;
    uint64_t bytes = 0;
  };

  void Forget(uint64_t dir, Listing* listing) ARCHIL_REQUIRES(mu_);
  // Walks `dir`'s items from `from` depth first (see Began), appending to `out` within `budget`.
  // Returns true if it walked to the end of the recorded listing.
  bool Collect(uint64_t dir, size_t from, int depth, Budget* budget, std::vector<File>* out)
      ARCHIL_REQUIRES(mu_);
  void NewWindow() ARCHIL_REQUIRES(mu_);

  const ListingOrderLimits limits_;
  mutable Mutex mu_;
  std::unordered_map<uint64_t, Listing> dirs_ ARCHIL_GUARDED_BY(mu_);
  std::unordered_map<uint64_t, Place> places_ ARCHIL_GUARDED_BY(mu_);  // by inode
  size_t entries_ ARCHIL_GUARDED_BY(mu_) = 0;
  struct Ahead {
    uint64_t size = 0;
    uint64_t window = 0;
  };
  // Files Began returned and no READ has begun yet (at most kMaxAhead), by inode.
  std::unordered_map<uint64_t, Ahead> ahead_ ARCHIL_GUARDED_BY(mu_);
  uint64_t window_ ARCHIL_GUARDED_BY(mu_) = 0;
  size_t window_files_ ARCHIL_GUARDED_BY(mu_) = 0;  // of ahead_, those of the current window
  uint64_t window_bytes_ ARCHIL_GUARDED_BY(mu_) = 0;
};

}  // namespace archil::fs
