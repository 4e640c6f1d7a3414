// Lineages: how the disks of an engine fork from one another (docs/formats.md §5.3).
//
// A branch reads what it has not changed from the checkpoint it was made from: its read chain is
// (parent, fork epoch), then the parent's own chain, down to the lineage's root. A *level* is one
// disk seen at one epoch: its head (kHeadView) or a frozen epoch. This registry keeps, for every
// disk the engine holds (hidden ones included), where its chain continues, and caches the answer
// to "below this level, which level holds keys of inode X" (the ORIGIN walk), which never changes
// once computed because every level below a disk's head is frozen.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "base/mutex.h"
#include "engine/types.h"

namespace archil::engine {

// The epoch of a head view: newer than every frozen epoch.
inline constexpr Epoch kHeadView{UINT64_MAX};

struct LevelRef {
  DiskNo disk;
  Epoch epoch;  // kHeadView or a frozen epoch of `disk`
  bool head() const { return epoch == kHeadView; }
  bool operator==(const LevelRef&) const = default;
};

struct DiskLineage {
  uint32_t lineage_index = 0;  // the inode-number space of inodes this disk creates
  DiskNo root;                 // the lineage's root (itself for a root)
  DiskNo parent;               // 0 for a root
  Epoch fork_epoch;            // the parent's epoch this disk was made from (0 for a root)
};

class Lineages {
 public:
  void Add(DiskNo disk, const DiskLineage& lineage) ARCHIL_EXCLUDES(mu_);
  // Forgets a disk and every cached walk through it. REQUIRES: it has no children.
  void Remove(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  std::optional<DiskLineage> Get(DiskNo disk) const ARCHIL_EXCLUDES(mu_);
  // Disks registered whose parent is `disk`.
  size_t Children(DiskNo disk) const ARCHIL_EXCLUDES(mu_);

  // The cached result of the walk below `disk`'s head for `ino` (outer nullopt: not cached;
  // inner nullopt: no level below holds the inode).
  std::optional<std::optional<LevelRef>> CachedWalk(DiskNo disk, Ino ino) const
      ARCHIL_EXCLUDES(mu_);
  void CacheWalk(DiskNo disk, Ino ino, std::optional<LevelRef> next) ARCHIL_EXCLUDES(mu_);

 private:
  static constexpr size_t kMaxCachedWalks = 1 << 20;
  mutable Mutex mu_;
  std::map<uint64_t, DiskLineage> disks_ ARCHIL_GUARDED_BY(mu_);
  std::map<std::pair<uint64_t, uint64_t>, std::optional<LevelRef>> walks_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::engine
