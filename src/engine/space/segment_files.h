// SegmentFiles: the segment files of one server, DIR/<disk number, 16 hex>/<seg_no, 16 hex>
// (docs/formats.md §6-7): file handles, block I/O and the durability of names.
//
// What goes where, and when a segment is open, sealed or dead, is the engine's; this class only
// makes the file operations safe: a created segment's name is durable before Create returns
// (SyncDir of its directory, and of DIR for a disk's first segment), and so is a removal.
//
// Thread-safety: safe for concurrent use. Reads and writes of different blocks may run at once.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "engine/types.h"
#include "io/env.h"

namespace archil::engine {

class SegmentFiles {
 public:
  SegmentFiles(io::Env* env, std::string dir) : env_(env), dir_(std::move(dir)) {}

  // Creates the (empty) file of a new segment; its name is durable when this returns.
  // EEXIST if it exists.
  Status Create(DiskNo disk, SegNo seg) ARCHIL_EXCLUDES(mu_);
  // Writes `data` (whole blocks) at block `blk`; durable only after Sync.
  Status Write(DiskNo disk, SegNo seg, uint32_t blk, std::string_view data) ARCHIL_EXCLUDES(mu_);
  // Starts writing `nblk` blocks from `blk` to the device without waiting (a hint for a later
  // Sync; io::File::StartWriteback).
  void StartWriteback(DiskNo disk, SegNo seg, uint32_t blk, uint32_t nblk) ARCHIL_EXCLUDES(mu_);
  // fdatasync: everything written to this segment before the call is durable.
  Status Sync(DiskNo disk, SegNo seg) ARCHIL_EXCLUDES(mu_);
  // `nblk` blocks from `blk`. Corruption if the file is shorter (committed data is never past
  // the end of its segment once intents are replayed).
  Result<std::string> Read(DiskNo disk, SegNo seg, uint32_t blk, uint32_t nblk)
      ARCHIL_EXCLUDES(mu_);
  // As Read, into `out` (nblk * kBlockSize bytes), sparing a copy.
  Status ReadInto(DiskNo disk, SegNo seg, uint32_t blk, uint32_t nblk, char* out)
      ARCHIL_EXCLUDES(mu_);
  // Unlinks one segment; durable when this returns. OK if it does not exist. Reads and syncs
  // already in flight on it finish on the file as it was.
  Status Remove(DiskNo disk, SegNo seg) ARCHIL_EXCLUDES(mu_);
  // Truncates a segment to nothing (one a failed mutation left, that no record names), giving
  // its blocks back to the file system.
  Status Empty(DiskNo disk, SegNo seg) ARCHIL_EXCLUDES(mu_);
  // Removes every segment file of `disk` not in `keep` (files whose records never committed, or
  // whose removal a crash undid). Names that are not segment numbers are left alone.
  Status RemoveUnlisted(DiskNo disk, const std::vector<SegNo>& keep) ARCHIL_EXCLUDES(mu_);
  // Removes every segment of `disk` and its directory. OK if there are none.
  Status RemoveDisk(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  // Closes every handle (after a simulated crash, before reopening).
  void CloseAll() ARCHIL_EXCLUDES(mu_);

  std::string DiskDir(DiskNo disk) const;
  std::string Path(DiskNo disk, SegNo seg) const;

 private:
  // The open file of a segment, opened on first use. Shared, so that a Remove meanwhile does
  // not close it under a read in flight.
  Result<std::shared_ptr<io::File>> Handle(DiskNo disk, SegNo seg) ARCHIL_EXCLUDES(mu_);

  io::Env* const env_;
  const std::string dir_;
  Mutex mu_;
  std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<io::File>> files_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::engine
