// ListingOrder: the order in which the disk listed each directory's files, so that files read one
// after another in that order (`cat` of what `find` printed, `grep -r`, `tar c`, `cp -r`) are read
// ahead of their reader (ReadAhead::Prefetch, docs/semantics.md §5.11).
//
// Listings are recorded page by page from READDIRPLUS answers, whose attributes give each file's
// size: a page at the listing's start begins the directory's record again, a page that continues
// where the recorded ones ended extends it, any other page is ignored. Only regular files are kept.
//
// Began(ino) is told of every file whose reading begins (a READ at offset 0). The file is read in
// order when it is the first file its directory listed, or the file listed after the one begun
// before it there, empty files between them aside (reading one sends no READ). For a file read in
// order, Began returns the files listed after it that no earlier call returned: at most
// `files_ahead` entries past it, whose sizes add up to at most `bytes_ahead`, skipping empty files
// (nothing to read) and files over `max_file_bytes` (they get the read-ahead of a file read in
// order once their reader begins them).
//
// Nothing here is a promise about data: a record out of date (a name changed since) only makes a
// read ahead useless, never wrong (ReadAhead keeps what it reads coherent with this mount's
// changes).
//
// Bounded: at most `max_entries` files recorded in all; past it everything is forgotten.
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
  // One entry of a listing's page, as the disk gave it: `offset` is where the listing resumes
  // after it; `file` is set for a regular file.
  struct Entry {
    uint64_t offset = 0;
    bool file = false;
    File what;
  };

  explicit ListingOrder(ListingOrderLimits limits = {}) : limits_(limits) {}

  // A page of `dir`'s listing, asked for after `offset` (0: from the start).
  void Listed(posix::Ino dir, uint64_t offset, const std::vector<Entry>& page) ARCHIL_EXCLUDES(mu_);
  // The reading of `ino` begins; returns the files to read ahead of its reader (see above).
  std::vector<File> Began(posix::Ino ino) ARCHIL_EXCLUDES(mu_);

  size_t entries() const ARCHIL_EXCLUDES(mu_);

 private:
  struct Listing {
    std::vector<File> files;
    uint64_t end = 0;      // the offset after the last entry recorded
    size_t next = 0;       // the index a file read in order has (one past the last begun)
    size_t ahead_end = 0;  // files before this index were returned by Began
  };
  struct Place {
    uint64_t dir = 0;
    size_t index = 0;
  };

  void Forget(uint64_t dir, Listing* listing) ARCHIL_REQUIRES(mu_);

  const ListingOrderLimits limits_;
  mutable Mutex mu_;
  std::unordered_map<uint64_t, Listing> dirs_ ARCHIL_GUARDED_BY(mu_);
  std::unordered_map<uint64_t, Place> places_ ARCHIL_GUARDED_BY(mu_);  // by file inode
  size_t entries_ ARCHIL_GUARDED_BY(mu_) = 0;
};

}  // namespace archil::fs
