// Recovery from the object store (docs/tiering.md §6): an engine directory with no engine in it
// is filled from the bucket, so that a fresh server serves every disk it held.
//
// Every disk with a MANIFEST or log objects under disks/<dsk-id>/ is recovered, but one whose
// MANIFEST says it is being deleted:
//  1. its base: the newest snapshot its MANIFEST publishes whose manifest and parts are all in
//     the store (the older retained one if the newest is not whole; none if it publishes none,
//     and then the log from seq 1). Its parts are checked (size, CRC-32C, the strict decoder)
//     and written (Engine::ApplySnapshotEntries);
//  2. its log objects in key order (generation, then first seq), those of each generation only
//     within the range the MANIFEST's owners give it (tier/manifest.h), checked
//     (tier/log_object.h), their records after the base applied in seq order
//     (Engine::ApplyLogRecords refuses a gap or a repeat). The objects are read twice: first to
//     learn each disk's last seq and the dependencies of its records, so that a disk whose log
//     needs more of another disk's log than the store holds (a branch without its fork point) is
//     dropped, with an error logged and counted, rather than recovered broken; the disks that need
//     it are dropped too;
//  3. every segment the recovered state names is downloaded to its file, eight at once: a
//     temporary file, fsync, rename, fsync of the directory. A segment object that is missing fails
//     the recovery, naming it: with the shipper's rule (a record ships only once its segments are
//     stored) that means the bucket lost an object.
// A file RECOVERING in the directory marks a recovery under way: one that a crash interrupted is
// started again from an empty directory.
//
// The recovered disks hold every write whose log record was shipped: the recovery point of
// docs/tiering.md §7. What is recovered is what the engine's own state was at the last shipped
// record, times and block counts included.
//
// Thread-safety: one call at a time per directory; nothing else may use `options.dir` meanwhile.
#pragma once

#include <cstdint>

#include "base/progress.h"
#include "base/status.h"
#include "engine/engine.h"
#include "store/object_store.h"

namespace archil::tier {

struct RecoveryReport {
  uint64_t disks = 0;
  uint64_t snapshots = 0;
  uint64_t snapshot_entries = 0;
  uint64_t log_objects = 0;
  uint64_t records = 0;
  uint64_t segments = 0;
  uint64_t segment_bytes = 0;
  uint64_t dropped_disks = 0;       // whose log depends on more of another's than the store holds
  uint64_t deleted_disks = 0;       // whose manifest says deleting: skipped
  uint64_t fenced_log_objects = 0;  // of a generation no owner range gives them to: not read
};

// Fills the engine directory `options.dir` from `store`; the recovered engine writes under
// `owner_gen` from then on (Engine::SetOwnerGen), which must be above every generation the
// bucket has seen (the caller took it over: tier/ownership.h), and a caller then hands each
// disk's log to it (ClaimDisks). REQUIRES: `options.dir` holds no engine (FailedPrecondition if
// its database exists), or one that an interrupted recovery left. The engine is closed again on
// return; open it as usual.
// `progress`, if given, hears of each log object read and replayed and each segment downloaded
// (from several threads).
Result<RecoveryReport> RecoverFromStore(const engine::EngineOptions& options,
                                        store::ObjectStore* store, uint32_t owner_gen = 1,
                                        Progress* progress = nullptr);

}  // namespace archil::tier
