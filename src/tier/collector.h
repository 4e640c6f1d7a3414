// Collector: deletes the objects that no retained recovery base can reach (docs/tiering.md §4).
//
// The retained bases of a disk are the snapshots its MANIFEST lists (the two newest published),
// each with the log after it. A pass, for every disk the engine holds (hidden ones too):
//  - a log object is unreachable once the next one starts at or below the older retained
//    snapshot's seq + 1 (every record in it is at or below that seq); the newest never is;
//  - a snapshot's objects are unreachable when it is not retained and older than the newest
//    retained one (published and later superseded, or uploaded and never published);
//  - a segment object of the disk is unreachable when the engine has no SEG record of it (it
//    died, and with a tier a segment dies only once uploaded), its death has reached the bucket
//    (the disk's uploaded_seq is past its last seq as of the first pass that found the segment
//    dead), no retained snapshot of the disk lists it, and no record in any retained log object
//    of any disk references it (segrefs, read after that check). Without the death rule, a pass
//    that listed the log before a record naming the segment was shipped, and the SEG records
//    after the segment died, deleted an object the bucket's log still needed.
// An object is deleted only when it has been unreachable in every pass for `grace_ms`, measured
// on this process's monotonic clock from the first pass that found it so. The grace is for
// readers of an older MANIFEST (a recovery that started before a publish). A restart starts the
// count again: it only ever delays a deletion. Wall-clock age alone never deletes anything.
//
// A deleted disk (one the engine keeps a tombstone of: marked `deleting` in its MANIFEST, then
// purged) loses every object under disks/<dsk-id>/ and its segments, after the same grace, its
// MANIFEST last; then the engine forgets it.
//
// Thread-safety: one thread runs Pass() (or Start()); stats() from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/pass_loop.h"
#include "base/status.h"
#include "engine/tier_source.h"
#include "store/object_store.h"

namespace archil::tier {

struct CollectorOptions {
  engine::TierSource* engine = nullptr;  // REQUIRES: outlives the collector
  store::ObjectStore* store = nullptr;   // REQUIRES: outlives the collector
  const Clock* clock = nullptr;          // REQUIRES: outlives the collector
  int64_t grace_ms = int64_t{24} * 3600 * 1000;
  int interval_ms = 60000;
};

struct CollectorStats {
  uint64_t deleted_log_objects = 0;
  uint64_t deleted_snapshot_objects = 0;
  uint64_t deleted_segments = 0;
  uint64_t deleted_disk_objects = 0;  // objects of deleted disks
  uint64_t deleted_disks = 0;  // every object of a deleted disk gone, its tombstone forgotten
  // At the end of the last pass: unreachable inside the grace period, or dead segments whose
  // death is not yet in the bucket.
  uint64_t waiting = 0;
  uint64_t failed_passes = 0;
  std::string last_error;
};

class Collector {
 public:
  explicit Collector(const CollectorOptions& options);
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  Status Pass();
  void Start() { loop_.Start(); }
  CollectorStats stats() const ARCHIL_EXCLUDES(mu_);

 private:
  enum class Kind { kLog, kSnapshot, kSegment, kDeletedDisk };
  struct DiskPlan;
  // What of `disk` is unreachable, and the segrefs its retained log objects hold.
  Status Plan(engine::DiskNo disk, DiskPlan* plan);
  // The segrefs of a stored log object, read once (objects never change).
  Result<const std::vector<std::pair<uint64_t, uint64_t>>*> SegrefsOf(const std::string& key);
  // The segments a stored snapshot lists, read once.
  Result<const std::vector<uint64_t>*> SegmentsOf(const std::string& manifest_key);

  const CollectorOptions options_;
  // Touched by the pass's thread only.
  std::map<std::string, int64_t> unreachable_since_;  // key -> monotonic ns
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> segrefs_;
  std::map<std::string, std::vector<uint64_t>> snapshot_segments_;
  // Segment object -> the disk's last seq when a pass first found it dead.
  std::map<std::string, uint64_t> died_by_;
  mutable Mutex mu_;
  CollectorStats stats_ ARCHIL_GUARDED_BY(mu_);
  PassLoop loop_;  // last
};

}  // namespace archil::tier
