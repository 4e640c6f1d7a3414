// HolderTable: which holders have which inodes of one disk open, with a count per holder. A
// holder is a disk-server session (its public holder id) or any other user of the disk that
// opens files (docs/protocol.md §5.3 "Orphans"). In memory only: an inode whose last name goes
// while it is held keeps an ORPHAN record naming its holders (DiskFs writes it), and the table is
// restored from those records at start (Restore).
//
// Thread-safety: safe for concurrent use; it calls nothing outside itself under its lock.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "engine/types.h"

namespace archil::engine {

class HolderTable {
 public:
  // One more reference of `holder` to `ino`.
  void Add(Ino ino, uint64_t holder) ARCHIL_EXCLUDES(mu_);
  // One reference of `holder` to `ino` fewer. Returns whether no holder has `ino` open any more;
  // EINVAL if `holder` has no reference to it.
  Result<bool> Remove(Ino ino, uint64_t holder) ARCHIL_EXCLUDES(mu_);
  // Every reference of `holder` goes. Returns the inodes no holder has open any more.
  std::vector<Ino> DropHolder(uint64_t holder) ARCHIL_EXCLUDES(mu_);
  // The holders of `ino`, in increasing order; empty if none.
  std::vector<uint64_t> Of(Ino ino) const ARCHIL_EXCLUDES(mu_);
  // At start, from an ORPHAN record: each of `holders` holds `ino` once more.
  void Restore(Ino ino, const std::vector<uint64_t>& holders) ARCHIL_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<uint64_t, std::map<uint64_t, int>> held_ ARCHIL_GUARDED_BY(mu_);  // ino -> holder -> n
};

}  // namespace archil::engine
