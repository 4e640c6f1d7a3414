// EpochTable: one disk's open epoch and the frozen epochs that have an EPOCH record (a checkpoint,
// a branch's fork, or released and waiting for collection), in memory (docs/formats.md §4.1,
// §5.2). The database holds the truth; DiskFs keeps this table equal to what its commits write:
// it changes an entry inside the commit that writes the record, and puts the old entry back if
// that commit fails (Set returns what to put back). Read at open from the records (Restore).
//
// What the table answers is what the versioned writes ask on every mutation: is any epoch pinned
// (else nothing old needs keeping), is one pinned in a range (a superseded version is kept for
// it), and which pinned epochs surround a released one (what it alone kept).
//
// Thread-safety: safe for concurrent use; it calls nothing outside itself under its lock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "engine/records/meta_records.h"
#include "engine/types.h"

namespace archil::engine {

struct CheckpointInfo {
  std::string name;
  Epoch epoch;
  int64_t created_ns = 0;
};

class EpochTable {
 public:
  // What a mutation reads once at its start, under one lock.
  struct Now {
    Epoch open;               // the epoch new versions are born in
    bool any_pinned = false;  // some frozen epoch is a checkpoint or a live branch's fork
  };
  // The pinned epochs around k (other than k): prev = the greatest below (0 if none), next = the
  // least above (else the open epoch).
  struct Neighbours {
    uint64_t prev = 0;
    uint64_t next = 0;
  };

  // At open: the disk's open epoch and its EPOCH records by epoch.
  void Restore(Epoch open, std::map<uint64_t, EpochRecord> frozen) ARCHIL_EXCLUDES(mu_);

  Now Current() const ARCHIL_EXCLUDES(mu_);

  // A checkpoint's commit: epoch `e` (the open one) freezes with record `r` and `e + 1` opens.
  // Unfreeze(e) undoes it (the commit failed).
  void Freeze(Epoch e, const EpochRecord& r) ARCHIL_EXCLUDES(mu_);
  void Unfreeze(Epoch e) ARCHIL_EXCLUDES(mu_);
  // Epoch `e`'s record becomes `r`; returns the entry it replaced (nullopt if there was none),
  // which Put back restores.
  std::optional<EpochRecord> Set(Epoch e, const EpochRecord& r) ARCHIL_EXCLUDES(mu_);
  void PutBack(Epoch e, const std::optional<EpochRecord>& previous) ARCHIL_EXCLUDES(mu_);
  // Collection of `e` is durable: its entry goes unless something pinned it again meanwhile.
  void ForgetIfUnpinned(Epoch e) ARCHIL_EXCLUDES(mu_);

  // True if an epoch in [lo, hi] is pinned.
  bool PinnedIn(Epoch lo, Epoch hi) const ARCHIL_EXCLUDES(mu_);
  Neighbours PinnedNeighbours(Epoch k) const ARCHIL_EXCLUDES(mu_);
  // The epoch checkpoint `name` froze; nullopt if no checkpoint has that name.
  std::optional<Epoch> CheckpointNamed(std::string_view name) const ARCHIL_EXCLUDES(mu_);
  std::vector<CheckpointInfo> Checkpoints() const ARCHIL_EXCLUDES(mu_);  // oldest first
  // Released epochs that nothing pins any more: what collection has left to free.
  std::vector<Epoch> ReleasedUnpinned() const ARCHIL_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  Epoch open_ ARCHIL_GUARDED_BY(mu_);
  std::map<uint64_t, EpochRecord> frozen_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::engine
