// CommitLog: the engine's CommitQueueOptions::finish when a tier is configured. It turns what one
// mutation wrote into one log record per disk it touched (formats.md §8.3), numbered by that
// disk's COUNTERS.last_seq, and puts each in the `outbox` CF (formats.md §4.11) in the mutation's
// own batch: the log is exactly the commits, in commit order, and cannot lose or gain one.
//
// A record's mutations are the prepare's writes to logged keys (LoggedKey), in order, then the
// COUNTERS put that advances last_seq. Its segrefs are the segments whose blocks a segusage SET
// makes live. A branch's first record (its creation) depends on its parent's log up to the
// parent's last seq, this commit's record included: the shipper holds it until that is stored
// (docs/tiering.md §2). A disk whose COUNTERS record is absent after the mutation (its deletion)
// gets no record: the tier records a deletion in the disk's MANIFEST, not its log.
//
// Thread-safety: Finish runs on the commit thread only (inside prepares).
#pragma once

#include <array>

#include "base/clock.h"
#include "engine/commit/commit_queue.h"
#include "engine/records/column_families.h"

namespace archil::engine {

class CommitLog {
 public:
  // REQUIRES: `cfs` and `clock` outlive the log.
  // REQUIRES: `cfs` holds its handles already.
  CommitLog(const Cfs* cfs, const Clock* clock);
  Status Finish(Txn& t);

 private:
  const Cfs* cfs_;
  const Clock* clock_;
  std::array<int, 64> cf_by_id_;  // Cf index by RocksDB column family id; -1: none
};

}  // namespace archil::engine
