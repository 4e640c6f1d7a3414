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
// AdmitMutation is what the disk server asks before it runs a mutation: OK while the lease
// holds; Unavailable while it has lapsed (the store has not answered a renewal: writes wait and
// are retried, DELAY); PermissionDenied once another server took the bucket over (fenced).
//
// Thread-safety: the start-up calls from one thread; AdmitMutation and Status from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "catalog/sqlite_catalog.h"
#include "engine/engine.h"
#include "store/object_store.h"
#include "tier/catalog_shipper.h"
#include "tier/collector.h"
#include "tier/log_shipper.h"
#include "tier/ownership.h"
#include "tier/segment_uploader.h"
#include "tier/snapshotter.h"

namespace archil {

struct TierServiceOptions {
  std::string store_uri;  // --object-store
  std::string data_dir;
  const Clock* clock = nullptr;  // REQUIRES: outlives the service
  bool take_over = false;        // --take-over: take the bucket from a server that stopped renewing
  bool force = false;            // --force-take-over: at once
  int lease_ms = 15000;
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
  // Step 2 above. Reports whether it recovered.
  Result<bool> RecoverIfEmpty(const std::string& catalog_path, const engine::EngineOptions& eo);
  // Step 3 above. REQUIRES: `engine` and `catalog` outlive the service.
  Status Start(engine::Engine* engine, SqliteCatalog* catalog);
  // Seals, uploads, ships and copies the catalog until nothing is left or `bound_ms` passed; if
  // nothing is left, stops the machines and releases the bucket (another server may take it at
  // once).
  void Drain(int bound_ms);
  Status AdmitMutation() const;
  TierStatus Report() const;
  // What /api/health says of the tier (no credential, no bucket name): the lease, the
  // generation, what waits for the bucket and how old the oldest of it is. Unavailable once
  // fenced (the health check fails: the server must not serve writes).
  Status Health(nlohmann::json* detail) const;

 private:
  explicit TierService(const TierServiceOptions& options) : options_(options) {}

  const TierServiceOptions options_;
  std::unique_ptr<store::ObjectStore> store_;
  std::unique_ptr<tier::BucketLease> lease_;
  engine::Engine* engine_ = nullptr;
  std::unique_ptr<tier::SegmentUploader> uploader_;
  std::unique_ptr<tier::LogShipper> shipper_;
  std::unique_ptr<tier::Snapshotter> snapshotter_;
  std::unique_ptr<tier::Collector> collector_;
  std::unique_ptr<tier::CatalogShipper> catalog_;
};

}  // namespace archil
