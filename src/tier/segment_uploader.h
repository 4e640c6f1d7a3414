// SegmentUploader: ships the engine's sealed segments to the object store, the Upload transition
// SEALED -> UPLOADED of docs/tiering.md §1.
//
// A pass lists TierSource::SealedSegments() (oldest seal first) and, for each segment:
//   1. PutFile(<key>, file): with dir:// on the data directory's file system a link(2) of the
//      file itself (stored_by_link), else a copy or a PUT with If-None-Match: *;
//   2. on AlreadyExists, the object was stored by an earlier attempt whose record never committed
//      (kill -9 between the PUT and the batch, or a reply lost on the way): the object is compared
//      with the file (size, then CRC-32C of every byte, read in 8 MiB ranges). Equal: go on.
//      Different: two writers wrote one name (docs/tiering.md §5), which loses data if ignored,
//      so that disk's uploads stop for the life of this uploader, with the error logged and
//      returned by pass() and stats();
//   3. TierSource::SegmentUploaded(disk, seg, linked): the batch SEG(UPLOADED). From then on the
//      segment may die (Die, §1) and its file be removed; the object stays until the collector
//      (§4) removes it.
// A segment whose disk is purged meanwhile is skipped (with a tier only UPLOADED segments die, so
// a segment cannot vanish otherwise). Up to `parallel` segments are in flight at once, started in
// seal order. A store error (after the store's own retries, store/retry.h) ends the pass (no new
// upload starts; those in flight finish): the next pass starts again at the oldest segment, so
// uploads resume by themselves once the store is back.
//
// A pass does not end with its first listing: each seal reported by Kick() while it runs makes it
// list again and take in the new segments, so the workers stay busy while seals keep coming and a
// pass ends only when nothing it knows of waits. What waits is known per disk from that listing
// (stats().waiting), within one listing of the seal, and shrinks as each upload completes: what
// the server's write gate reads (tier/write_gate.h).
//
// Object names (docs/formats.md §8): lineages/<root dsk-id>/seg/<dsk-id>/<seg_no:016x>.
//
// REQUIRES: the engine was opened with keep_segments_until_uploaded (else a segment can die
// before its upload, and the tier would have lost it).
//
// Thread-safety: Pass() and Start() must not run concurrently with each other (one uploading
// thread: call Stop() before calling Pass() yourself); stats() and Kick() are safe from any
// thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "base/mutex.h"
#include "base/pass_loop.h"
#include "base/status.h"
#include "engine/tier_source.h"
#include "store/object_store.h"

namespace archil::tier {

struct SegmentUploaderOptions {
  engine::TierSource* engine = nullptr;  // REQUIRES: outlives the uploader
  store::ObjectStore* store = nullptr;   // REQUIRES: outlives the uploader
  // The background thread's pass interval when nothing kicks it, and after a failed pass.
  int interval_ms = 1000;
  // Segments uploaded at once (each a PutFile; an S3 store also splits a large one into parts).
  int parallel = 4;
  // Runs after each segment it uploads (the log shipper's records that name it may now go), on
  // the uploading thread. Must not block.
  std::function<void()> on_uploaded;
};

// What one disk has sealed and not yet uploaded.
struct DiskBacklog {
  uint64_t segments = 0;
  uint64_t bytes = 0;
  int64_t oldest_sealed_ns = 0;  // the engine's clock (SealedSegment::sealed_ns); 0 if none
};

// What the uploader has done since it was made, and what waits.
struct SegmentUploaderStats {
  uint64_t uploaded_segments = 0;
  uint64_t uploaded_bytes = 0;
  uint64_t linked_segments = 0;   // of uploaded_segments: stored by link(2)
  uint64_t adopted_segments = 0;  // of uploaded_segments: found already stored, equal
  uint64_t failed_passes = 0;
  // Sealed and not yet uploaded, in all and per DiskNo value: as the running (or last) pass
  // listed it, less what it has uploaded since; kept as each upload completes.
  uint64_t pending_segments = 0;
  uint64_t pending_bytes = 0;
  int64_t oldest_pending_sealed_ns = 0;  // 0 if nothing is pending
  std::map<uint64_t, DiskBacklog> waiting;
  // Bytes per second of the last pass that uploaded something (0 before one did).
  uint64_t bytes_per_second = 0;
  std::set<uint64_t> stopped_disks;              // DiskNo values whose uploads stopped (a mismatch)
  std::map<uint64_t, std::string> stop_reasons;  // why, per stopped disk
  std::string last_error;                        // "" if the last pass succeeded
};

class SegmentUploader {
 public:
  explicit SegmentUploader(const SegmentUploaderOptions& options);
  // Stops and joins the background thread, if started.
  ~SegmentUploader() { Stop(); }
  SegmentUploader(const SegmentUploader&) = delete;
  SegmentUploader& operator=(const SegmentUploader&) = delete;

  // The object name of segment `seg` of `disk`, whose lineage is rooted at `root`.
  static std::string ObjectKey(engine::DiskNo root, engine::DiskNo disk, engine::SegNo seg);
  // What every such name of `disk` starts with; the key's rest is the segment number, 16 hex.
  static std::string ObjectPrefix(engine::DiskNo root, engine::DiskNo disk);

  // One pass over every sealed segment, on the calling thread, taking in those sealed while it
  // runs (see above) until nothing it knows of waits or Stop() is called. Ok if every segment was
  // uploaded or skipped; else the first error, the segments after it left for the next pass.
  Status Pass() ARCHIL_EXCLUDES(mu_);
  // Runs passes on a background thread, every interval_ms and whenever kicked, until destroyed.
  void Start() { loop_.Start(); }
  // Stops the background thread; its running pass lists no more seals and ends once the uploads
  // it has started finish. Pass() may then be called directly.
  void Stop() ARCHIL_EXCLUDES(run_mu_);
  // A segment was sealed: a running pass lists again and takes it in (counted in Waiting() at
  // once, uploaded by that pass); else the background thread runs a pass now.
  void Kick() ARCHIL_EXCLUDES(run_mu_);
  SegmentUploaderStats stats() const ARCHIL_EXCLUDES(mu_);
  // stats().waiting of one disk and, with `stop_reason`, why its uploads stopped ("" if they
  // run): one lock and two lookups, asked before every write.
  DiskBacklog Waiting(engine::DiskNo disk, std::string* stop_reason = nullptr) const
      ARCHIL_EXCLUDES(mu_);

 private:
  class UploadPass;  // one pass's queue and workers (segment_uploader.cc)
  // Uploads one segment of `bytes` bytes. Ok also when it was skipped (gone).
  Status UploadOne(const engine::SealedSegment& s, uint64_t bytes) ARCHIL_EXCLUDES(mu_);
  // On AlreadyExists: Ok if the stored object equals the file, else kCorruption.
  Status CompareStored(const std::string& key, const std::string& path, uint64_t size);

  const SegmentUploaderOptions options_;
  mutable Mutex mu_;  // after run_mu_, when both are held
  SegmentUploaderStats stats_ ARCHIL_GUARDED_BY(mu_);
  // A running pass's queue (Pass() keeps it) and the seals reported since it last listed.
  Mutex run_mu_;
  CondVar run_cv_{&run_mu_};
  bool sealed_since_listing_ ARCHIL_GUARDED_BY(run_mu_) = false;
  bool stopping_ ARCHIL_GUARDED_BY(run_mu_) = false;  // Stop() is under way: no more listings
  PassLoop loop_;                                     // last: its thread stops before the rest goes
};

}  // namespace archil::tier
