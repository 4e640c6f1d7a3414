// The tier inside `archil server` (docs/tiering.md): the bucket that --object-store names, this
// server's ownership of it, the recovery of an empty data directory from it, and the machines
// that keep it up to date.
//
// Start-up, in this order (RunServer):
//   1. Open: opens the store (an s3:// store is probed: the bucket, the credentials, whether it
//      enforces conditional writes) and takes or continues its ownership (tier/ownership.h)
//      under the data directory's server id (DATA_DIR/server-id, made at the first start). An
//      empty data directory takes a bucket over from a server that stopped renewing its lease;
//      a data directory whose disks were taken over by another server is refused.
//   2. RecoverIfEmpty: a data directory without an engine (or with an unfinished recovery) and a
//      bucket that holds disks: the catalog comes back from catalog/LATEST, then the engine from
//      the disks' snapshots and logs (tier/recovery.h), under this server's generation. A bucket
//      with disks but no copy of the catalog is refused (the disks' tokens are in the catalog).
//   3. Start, once the engine is open with EngineOptions(): the engine writes under this
//      server's generation, every disk's log is handed to it (ClaimDisks), a disk that has no
//      base in the bucket yet (made before the tier ran) gets a snapshot, and the machines and
//      the lease's renewal start on their threads.
// Stop: Drain seals every open segment and uploads, ships and copies what it can within a
// bound, then the machines stop.
//
// AdmitMutation is what the disk server asks before it runs a mutation of a disk
// (tier/write_gate.h): OK while the lease holds and the disk's upload backlog is under its bound;
// Unavailable while the lease has lapsed or the backlog is over (writes wait and are retried,
// DELAY); EIO for a disk whose uploads stopped; PermissionDenied once another server took the
// bucket over (fenced).
//
// A sealed segment wakes the uploader at once (EngineOptions::on_sealed), and an upload the log
// shipper; both also run every second.
//
// Thread-safety: the start-up calls from one thread; AdmitMutation and Status from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "catalog/sqlite_catalog.h"
#include "engine/engine.h"
#include "store/counting_store.h"
#include "store/object_store.h"
#include "tier/catalog_shipper.h"
#include "tier/collector.h"
#include "tier/log_shipper.h"
#include "tier/ownership.h"
#include "tier/segment_uploader.h"
#include "tier/snapshotter.h"
#include "tier/write_gate.h"

namespace archil {

struct TierServiceOptions {
  std::string store_uri;  // --object-store
  std::string data_dir;
  const Clock* clock = nullptr;  // REQUIRES: outlives the service
  bool take_over = false;        // --take-over: take the bucket from a server that stopped renewing
  bool force = false;            // --force-take-over: at once
  int lease_ms = 15000;
  // Per disk: sealed data not yet uploaded beyond which its writes wait (--upload-backlog-mib).
  uint64_t max_backlog_bytes = uint64_t{1} << 30;
};

// What the API says of one disk's data on its way to the bucket (GET /api/disks/{id}, "tier").
struct DiskTierStatus {
  uint64_t bytes_to_upload = 0;  // sealed, not yet uploaded (the open segment is not counted)
  uint64_t segments_to_upload = 0;
  int64_t oldest_to_upload_ms = 0;       // how long the oldest of it has waited; 0 if none
  uint64_t records_to_ship = 0;          // of the server as a whole, at the last shipping pass
  uint64_t upload_bytes_per_second = 0;  // the server's last pass that uploaded
  std::string writes;                    // "accepted", "waiting: …" or "refused: …"
  // {"bytesToUpload": …, "segmentsToUpload": …, "oldestToUploadMs": …, "recordsToShip": …,
  //  "uploadBytesPerSecond": …, "writes": …} (docs/api.md).
  nlohmann::json ToJson() const;
};

// What `archil status` and /api/health say of the tier.
struct TierStatus {
  std::string store;  // Describe(): never a credential
  bool enforces_conditions = false;
  uint32_t owner_gen = 0;
  bool lease_valid = false;
  bool fenced = false;
  std::string fenced_by;
  int64_t lease_age_ms = 0;
  tier::SegmentUploaderStats uploads;
  tier::LogShipperStats shipping;
  tier::SnapshotterStats snapshots;
  tier::CollectorStats collection;
  tier::CatalogShipperStats catalog;
};

class TierService {
 public:
  static Result<std::unique_ptr<TierService>> Open(const TierServiceOptions& options);
  ~TierService();
  TierService(const TierService&) = delete;
  TierService& operator=(const TierService&) = delete;

  // The engine's options with the tier's on (the commit log, segments kept until uploaded).
  static engine::EngineOptions WithTier(engine::EngineOptions o);
  // WithTier, and each seal wakes this service's uploader (on_sealed).
  engine::EngineOptions ForServing(engine::EngineOptions o) const;
  // Step 2 above. Reports whether it recovered.
  Result<bool> RecoverIfEmpty(const std::string& catalog_path, const engine::EngineOptions& eo);
  // Step 3 above. REQUIRES: `engine` and `catalog` outlive the service.
  Status Start(engine::Engine* engine, SqliteCatalog* catalog);
  // Seals, uploads, ships and copies the catalog until nothing is left or `bound_ms` passed; if
  // nothing is left, stops the machines and releases the bucket (another server may take it at
  // once).
  void Drain(int bound_ms);
  Status AdmitMutation(engine::DiskNo disk) const;
  TierStatus Report() const;
  // The catalog has changes no copy in the bucket holds (false once the copies stopped). Waits for
  // the catalog, so it is kept out of Report(), which /api/health reads.
  bool CatalogBehind() const;
  DiskTierStatus DiskReport(engine::DiskNo disk) const;
  // What /api/health says of the tier (no credential, no bucket name): the lease, the
  // generation, what waits for the bucket and how old the oldest of it is. Unavailable once
  // fenced (the health check fails: the server must not serve writes).
  Status Health(nlohmann::json* detail) const;
  // The object store's calls so far, by kind (archil_store_* in docs/operations.md).
  const store::CountingStore& store_calls() const { return *counting_; }

 private:
  explicit TierService(const TierServiceOptions& options) : options_(options) {}

  // The uploader a seal wakes: shared with the engine's on_sealed, which may run after this
  // service has gone (the engine's syncer outlives it).
  struct SealKick {
    Mutex mu;
    tier::SegmentUploader* uploader ARCHIL_GUARDED_BY(mu) = nullptr;
  };
  void SetKick(tier::SegmentUploader* u) const;
  tier::WriteGateState GateState(engine::DiskNo disk) const;

  const TierServiceOptions options_;
  std::shared_ptr<SealKick> kick_ = std::make_shared<SealKick>();
  std::unique_ptr<store::ObjectStore> store_;  // a CountingStore over the one opened
  const store::CountingStore* counting_ = nullptr;
  std::unique_ptr<tier::BucketLease> lease_;
  engine::Engine* engine_ = nullptr;
  std::unique_ptr<tier::SegmentUploader> uploader_;
  std::unique_ptr<tier::LogShipper> shipper_;
  std::unique_ptr<tier::Snapshotter> snapshotter_;
  std::unique_ptr<tier::Collector> collector_;
  std::unique_ptr<tier::CatalogShipper> catalog_;
};

}  // namespace archil
