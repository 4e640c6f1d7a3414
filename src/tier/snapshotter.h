// Snapshotter: the machine of docs/tiering.md §3 (Take, Upload, Publish), per disk.
//
// A pass looks at every disk (hidden ones too). A disk gets a new snapshot when the log stored
// since its newest published snapshot holds at least `log_bytes` bytes, or is not empty and the
// last snapshot this process took of it is `max_age_ms` old. Then:
//   1. Take: TierSource::ScanDiskState reads the disk's logged keys in one RocksDB snapshot S, and
//      X = the disk's last seq in S. The keys are cut into parts of about `part_bytes`;
//   2. Upload: each part is PUT as disks/<dsk-id>/snap/<gen:08x>-<X:016x>/part-<i:06x>, then the
//      snapshot manifest SNAPSHOT (tier/manifest.h) with If-None-Match: *. A snapshot at X under
//      this generation is the disk's state at X whoever stored it, so a SNAPSHOT already there
//      (an attempt a crash interrupted before it published) is kept, and nothing is uploaded;
//      parts without their SNAPSHOT are referenced by nothing, and are overwritten;
//   3. Publish, only once LOCAL.uploaded_seq >= X (every record up to X is in the store, so every
//      segment S references is too): a compare-and-swap of disks/<dsk-id>/MANIFEST on its etag,
//      with X first in its list of snapshots and the previous newest second. Until then the
//      snapshot waits, and a later pass publishes it; a lost swap is retried by the next pass.
// A snapshot that is uploaded and never published (a crash, a lost swap) is ignored by recovery
// and deleted by the collector (tier/collector.h).
//
// REQUIRES: the engine was opened with log_commits.
//
// Thread-safety: as LogShipper: one thread runs Pass() (or Start()); stats() from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/pass_loop.h"
#include "base/status.h"
#include "engine/tier_source.h"
#include "store/object_store.h"
#include "tier/manifest.h"

namespace archil::tier {

struct SnapshotterOptions {
  engine::TierSource* engine = nullptr;  // REQUIRES: outlives the snapshotter
  store::ObjectStore* store = nullptr;   // REQUIRES: outlives the snapshotter
  const Clock* clock = nullptr;          // REQUIRES: outlives the snapshotter
  uint64_t log_bytes = uint64_t{64} << 20;
  int64_t max_age_ms = 3600 * 1000;
  size_t part_bytes = size_t{8} << 20;
  int interval_ms = 10000;
};

struct SnapshotterStats {
  uint64_t taken = 0;
  uint64_t published = 0;
  uint64_t waiting = 0;  // at the end of the last pass: uploaded, waiting for the log
  uint64_t parts = 0;
  uint64_t bytes = 0;
  uint64_t failed_passes = 0;
  std::string last_error;
};

class Snapshotter {
 public:
  explicit Snapshotter(const SnapshotterOptions& options);
  Snapshotter(const Snapshotter&) = delete;
  Snapshotter& operator=(const Snapshotter&) = delete;

  Status Pass();
  void Start() { loop_.Start(); }
  SnapshotterStats stats() const ARCHIL_EXCLUDES(mu_);

  // Steps 1 and 2 for one disk now, whatever the thresholds; returns X. NotFound if the disk has
  // no log.
  Result<engine::Seq> TakeAndUpload(engine::DiskNo disk);
  // Step 3 for the snapshot at `seq`: FailedPrecondition while the disk's uploaded_seq < `seq`
  // (the rule of docs/tiering.md §3), and if another writer swapped the manifest meanwhile.
  Status Publish(engine::DiskNo disk, engine::Seq seq);

 private:
  Status SnapshotDisk(engine::DiskNo disk);

  const SnapshotterOptions options_;
  const int64_t started_ns_;
  // Touched by the pass's thread only.
  std::map<uint64_t, engine::Seq> pending_;  // disk -> uploaded, not yet published
  std::map<uint64_t, int64_t> last_taken_ns_;
  mutable Mutex mu_;
  SnapshotterStats stats_ ARCHIL_GUARDED_BY(mu_);
  PassLoop loop_;  // last
};

// The disk manifest in `store` and its etag; an empty manifest of `disk` and an empty etag if
// there is none.
struct ManifestRead {
  DiskManifest manifest;
  std::string etag;
};
Result<ManifestRead> ReadDiskManifest(store::ObjectStore* store, engine::DiskNo disk);

}  // namespace archil::tier
