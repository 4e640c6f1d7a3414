// OpenSegment: the cursor of the segment one disk's new data goes to (docs/formats.md §4.10,
// §6.2), in memory: which segment is open, whether its SEG record is committed, the first block
// not yet handed out, the first block not yet completely written, and how many of its blocks are
// live. Only the commit thread hands blocks out and opens, closes or retires segments; the
// intent syncer reads the mark.
//
// A prepare that moves the cursor and then never reaches the database (it fails, or its group's
// Write does) must leave the cursor as it found it: DiskFs saves it first (Save) and puts it back
// on abort (Restore). Restoring, like rewinding, moves the generation on: blocks below the mark
// may then be handed out again, so an intent syncer that saw the old generation drops nothing.
//
// Thread-safety: safe for concurrent use; it calls nothing outside itself under its lock.
#pragma once

#include <cstdint>
#include <optional>

#include "base/mutex.h"
#include "engine/types.h"

namespace archil::engine {

class OpenSegment {
 public:
  // For the intent syncer: the open segment, the first block not yet completely written to it,
  // and the cursor's generation.
  struct Mark {
    SegNo seg;
    uint32_t written = 1;
    uint64_t gen = 0;
  };
  // Everything but the generation, to put back on abort.
  struct Saved {
    bool open = false;
    bool recorded = false;
    SegNo seg;
    uint32_t next = 1;
    uint32_t written = 1;
    uint32_t live = 0;
  };
  // Where `nblk` more blocks would go: `full` if the open segment (of `segment_blocks` data
  // blocks) has no room for them.
  struct Room {
    bool open = false;
    bool full = false;
    SegNo seg;
  };
  // Blocks handed out: `nblk` from `blk` of `seg`, whose SEG record is committed if `recorded`.
  struct Taken {
    SegNo seg;
    uint32_t blk = 1;
    bool recorded = false;
  };
  // What retiring `seg` needs to know: whether it is the open one, and if so how many of its
  // blocks were handed out and how many are live.
  struct Usage {
    bool open = false;
    uint32_t handed_out = 0;
    uint32_t live = 0;
  };

  // nullopt if no segment is open.
  std::optional<Mark> mark() const ARCHIL_EXCLUDES(mu_);
  // The open segment; with `recorded_only`, only if its SEG record is committed.
  std::optional<SegNo> current(bool recorded_only = false) const ARCHIL_EXCLUDES(mu_);
  bool holds(SegNo seg) const ARCHIL_EXCLUDES(mu_);  // `seg` is the open segment
  Room RoomFor(uint32_t nblk, uint32_t segment_blocks) const ARCHIL_EXCLUDES(mu_);
  Usage UsageOf(SegNo seg) const ARCHIL_EXCLUDES(mu_);

  Saved Save() const ARCHIL_EXCLUDES(mu_);
  void Restore(const Saved& saved) ARCHIL_EXCLUDES(mu_);

  // `seg` (its file made, nothing in it) becomes the open segment, not yet recorded.
  void Start(SegNo seg) ARCHIL_EXCLUDES(mu_);
  // The open segment, never recorded, is taken again from its first block.
  void Rewind() ARCHIL_EXCLUDES(mu_);
  // No segment is open: the next Take needs a Start.
  void Close() ARCHIL_EXCLUDES(mu_);
  // REQUIRES: a segment is open with room for `nblk` (RoomFor).
  Taken Take(uint32_t nblk) ARCHIL_EXCLUDES(mu_);
  // The commit that records `seg` is applied (no-op if `seg` is no longer the open segment).
  void Recorded(SegNo seg) ARCHIL_EXCLUDES(mu_);
  // Blocks of `seg` below `end` are written (no-op unless `seg` is the current segment).
  void Written(SegNo seg, uint32_t end) ARCHIL_EXCLUDES(mu_);
  // `nblk` blocks of `seg` became live / were freed (no-op unless `seg` is the open segment).
  void AddLive(SegNo seg, uint32_t nblk) ARCHIL_EXCLUDES(mu_);
  void SubLive(SegNo seg, uint32_t nblk) ARCHIL_EXCLUDES(mu_);

 private:
  bool HoldsLocked(SegNo seg) const ARCHIL_REQUIRES(mu_) { return open_ && seg_ == seg; }

  mutable Mutex mu_;
  bool open_ ARCHIL_GUARDED_BY(mu_) = false;
  bool recorded_ ARCHIL_GUARDED_BY(mu_) = false;  // its SEG record and counter are committed
  SegNo seg_ ARCHIL_GUARDED_BY(mu_);
  uint32_t next_ ARCHIL_GUARDED_BY(mu_) = 1;     // first block not handed out
  uint32_t written_ ARCHIL_GUARDED_BY(mu_) = 1;  // every block below was written
  uint64_t gen_ ARCHIL_GUARDED_BY(mu_) = 0;      // moves on when blocks may be handed out again
  uint32_t live_ ARCHIL_GUARDED_BY(mu_) = 0;     // blocks live (AddLive - SubLive)
};

}  // namespace archil::engine
