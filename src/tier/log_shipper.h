// LogShipper: ships each disk's commit log from the outbox to the object store, the machine of
// docs/tiering.md §2 (Ship, then Advance).
//
// A pass takes, for every disk (hidden ones too), the records after LOCAL.uploaded_seq in seq
// order, as long as every segment each one references is in the store (TierSource::SegmentStored),
// every other disk's log it depends on is shipped far enough (a branch's creation record: its
// parent's log up to the fork), and the object stays within max_object_bytes, and then:
//   1. PUT disks/<dsk-id>/log/<owner_gen:08x>/<first_seq:016x> with If-None-Match: * (a log
//      object, tier/log_object.h);
//   2. on AlreadyExists, an earlier attempt stored an object there and never advanced (kill -9
//      between the two): the stored object is read, and if each of its records equals the
//      outbox record of the same seq (a record never changes once written), it is adopted as it
//      is (it may hold fewer records than this attempt would). Otherwise another writer used the
//      name, and that disk's shipping stops (stats().stopped_disks), its outbox kept;
//   3. TierSource::LogShipped(disk, last seq): one batch advances uploaded_seq and drops the
//   records.
// A record blocked on a segment or a dependency blocks the later records of its disk only. A store
// error ends the pass; the next one starts again from uploaded_seq, so shipping resumes by itself.
// A pass also marks each disk deleted since in its MANIFEST (`deleting`: recovery skips it, the
// collector deletes its objects), after which the engine frees its space (DeletionMarked).
//
// REQUIRES: the engine was opened with log_commits and keep_segments_until_uploaded.
//
// Thread-safety: as SegmentUploader: one thread runs Pass() (or Start()); stats() and Kick() from
// any thread.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "base/mutex.h"
#include "base/pass_loop.h"
#include "base/status.h"
#include "engine/tier_source.h"
#include "store/object_store.h"

namespace archil::tier {

struct LogShipperOptions {
  engine::TierSource* engine = nullptr;  // REQUIRES: outlives the shipper
  store::ObjectStore* store = nullptr;   // REQUIRES: outlives the shipper
  size_t max_object_bytes = size_t{4} << 20;
  int interval_ms = 1000;
};

struct LogShipperStats {
  uint64_t shipped_records = 0;
  uint64_t shipped_objects = 0;
  uint64_t shipped_bytes = 0;
  uint64_t adopted_objects = 0;  // found already stored by an earlier attempt
  uint64_t deletions_marked = 0;
  uint64_t failed_passes = 0;
  uint64_t waiting_records = 0;  // at the end of the last pass: in outboxes, not shipped
  std::set<uint64_t> stopped_disks;
  std::string last_error;
};

class LogShipper {
 public:
  explicit LogShipper(const LogShipperOptions& options);
  LogShipper(const LogShipper&) = delete;
  LogShipper& operator=(const LogShipper&) = delete;

  // One pass over every disk, on the calling thread: Ok, or the first error.
  Status Pass() ARCHIL_EXCLUDES(mu_);
  void Start() { loop_.Start(); }
  // Stops the background thread (after its running pass); Pass() may then be called directly.
  void Stop() { loop_.Stop(); }
  void Kick() { loop_.Kick(); }
  LogShipperStats stats() const ARCHIL_EXCLUDES(mu_);
  // Whether `disk`'s shipping stopped (another writer used one of its log names).
  bool Stopped(engine::DiskNo disk) const ARCHIL_EXCLUDES(mu_);

 private:
  // Ships what it can of one disk; `waiting` gets how many records it left.
  Status ShipDisk(engine::DiskNo disk, uint64_t* waiting) ARCHIL_EXCLUDES(mu_);
  // Marks a deleted disk in its MANIFEST, then tells the engine.
  Status MarkDeleted(engine::DiskNo disk) ARCHIL_EXCLUDES(mu_);
  // Step 2 above: the seq the stored object ends at, or Corruption.
  Result<engine::Seq> Adopt(engine::DiskNo disk, const std::string& key);

  const LogShipperOptions options_;
  mutable Mutex mu_;
  LogShipperStats stats_ ARCHIL_GUARDED_BY(mu_);
  PassLoop loop_;  // last: its thread stops before the rest goes
};

}  // namespace archil::tier
