#include "tier_service.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/log.h"
#include "base/progress.h"
#include "base/random.h"
#include "base/strings.h"
#include "io/atomic_file.h"
#include "io/posix_env.h"
#include "store/store_uri.h"
#include "tier/manifest.h"
#include "tier/recovery.h"

namespace archil {
namespace {

// DATA_DIR/server-id: who this server is to its bucket, made once.
Result<std::array<uint8_t, 16>> ServerId(const std::string& data_dir) {
  const std::string path = data_dir + "/server-id";
  std::array<uint8_t, 16> id{};
  std::ifstream in(path);
  std::string text;
  if (in && std::getline(in, text)) {
    if (!IsLowerHex(text, 32)) return Status::Corruption(path + " is not a server id");
    for (size_t i = 0; i < 16; ++i) {
      id[i] = static_cast<uint8_t>(*ParseLowerHex(std::string_view(text).substr(2 * i, 2), 2));
    }
    return id;
  }
  ARCHIL_RETURN_IF_ERROR(SecureRandomBytes(id.data(), id.size()));
  ARCHIL_RETURN_IF_ERROR(io::WriteFileAtomically(
      io::PosixEnv(), path,
      HexEncode(std::string_view(reinterpret_cast<const char*>(id.data()), id.size())) + "\n",
      0600));
  return id;
}

bool HasEngine(const std::string& engine_dir) {
  return std::filesystem::exists(engine_dir + "/db/CURRENT") &&
         !std::filesystem::exists(engine_dir + "/RECOVERING");
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace

TierService::~TierService() {
  // The machines' threads stop before what they use goes (members are destroyed in reverse);
  // a seal no longer wakes the uploader.
  SetKick(nullptr);
  catalog_.reset();
  collector_.reset();
  snapshotter_.reset();
  uploader_.reset();
  shipper_.reset();
  lease_.reset();
}

engine::EngineOptions TierService::WithTier(engine::EngineOptions o) {
  o.log_commits = true;
  o.keep_segments_until_uploaded = true;
  return o;
}

engine::EngineOptions TierService::ForServing(engine::EngineOptions o) const {
  o = WithTier(std::move(o));
  o.on_sealed = [kick = kick_] {
    MutexLock lock(&kick->mu);
    if (kick->uploader != nullptr) kick->uploader->Kick();
  };
  return o;
}

void TierService::SetKick(tier::SegmentUploader* u) const {
  MutexLock lock(&kick_->mu);
  kick_->uploader = u;
}

Result<std::unique_ptr<TierService>> TierService::Open(const TierServiceOptions& o) {
  std::unique_ptr<TierService> t(new TierService(o));
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<store::ObjectStore> opened,
                          store::OpenObjectStore(o.store_uri, store::ProcessEnv()));
  auto counting = std::make_unique<store::CountingStore>(std::move(opened));
  t->counting_ = counting.get();
  t->store_ = std::move(counting);
  ARCHIL_LOG(kInfo) << "tier: object store " << t->store_->Describe();
  if (!t->store_->EnforcesConditions()) {
    ARCHIL_LOG(kWarn) << "tier: " << t->store_->Describe()
                      << " does not enforce conditional writes: the bucket lease is this "
                         "server's only fence (docs/adr/0020-owning-a-bucket.md says what a "
                         "paused old owner could then overwrite)";
  }
  using ServerIdBytes = std::array<uint8_t, 16>;
  ARCHIL_ASSIGN_OR_RETURN(ServerIdBytes id, ServerId(o.data_dir));
  tier::BucketLeaseOptions lo;
  lo.store = t->store_.get();
  lo.clock = o.clock;
  lo.server = id;
  lo.host = HostName();
  lo.lease_ms = o.lease_ms;
  lo.renew_ms = std::max(100, o.lease_ms / 3);
  lo.margin_ms = std::max(50, o.lease_ms * 2 / 15);
  // An empty data directory recovers from the bucket, taking it over from a server that stopped
  // renewing; one with disks takes it from another server only when told to.
  lo.take_over = o.take_over || !HasEngine(o.data_dir + "/engine");
  lo.force = o.force;
  ARCHIL_ASSIGN_OR_RETURN(t->lease_, tier::BucketLease::Acquire(lo));
  ARCHIL_LOG(kInfo) << "tier: this server owns the bucket as generation " << t->lease_->gen()
                    << (t->lease_->took_over() ? " (taken over)" : "");
  return t;
}

Result<bool> TierService::RecoverIfEmpty(const std::string& catalog_path,
                                         const engine::EngineOptions& eo) {
  if (HasEngine(eo.dir)) return false;
  ARCHIL_ASSIGN_OR_RETURN(store::ListPage disks, store_->List("disks/", "", 1));
  Result<store::ObjectInfo> latest = store_->Head("catalog/LATEST");
  if (!latest.ok() && latest.status().code() != Status::Code::kNotFound) return latest.status();
  if (disks.objects.empty() && !latest.ok()) return false;  // a fresh bucket
  if (!latest.ok()) {
    return Status::FailedPrecondition(
        "the bucket " + store_->Describe() +
        " holds disks but no copy of the catalog (catalog/LATEST): without it their names and "
        "tokens are unknown; refusing to recover");
  }
  const auto start = std::chrono::steady_clock::now();
  ARCHIL_LOG(kInfo) << "tier: recovering " << options_.data_dir << " from " << store_->Describe()
                    << ": the catalog first";
  // A stale write-ahead log beside the restored file would be applied to it: gone first.
  std::error_code ec;
  std::filesystem::remove(catalog_path + "-wal", ec);
  std::filesystem::remove(catalog_path + "-shm", ec);
  ARCHIL_ASSIGN_OR_RETURN(tier::CatalogPointer copy,
                          tier::RestoreCatalog(store_.get(), catalog_path));
  ARCHIL_LOG(kInfo) << "tier: catalog restored from " << copy.object << " (" << copy.size
                    << " bytes); now the disks";
  // On a terminal, a line that says how far it is (recovering 10 GiB takes minutes); in a log
  // file, only the lines above and below.
  std::unique_ptr<TerminalProgress> progress =
      TerminalProgress::IfTerminal(STDERR_FILENO, "recovery", options_.clock);
  Result<tier::RecoveryReport> recovered =
      tier::RecoverFromStore(WithTier(eo), store_.get(), lease_->gen(), progress.get());
  if (progress) progress->Finish();
  ARCHIL_ASSIGN_OR_RETURN(tier::RecoveryReport r, std::move(recovered));
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ARCHIL_LOG(kInfo) << "tier: recovered " << r.disks << " disks (" << r.snapshots << " snapshots, "
                    << r.records << " log records, " << r.segments << " segments, "
                    << r.segment_bytes / (1 << 20) << " MiB) in " << secs << " s; "
                    << r.deleted_disks << " deleted disks skipped, " << r.fenced_log_objects
                    << " log objects of a fenced owner ignored";
  if (r.dropped_disks > 0) {
    ARCHIL_LOG(kError) << "tier: " << r.dropped_disks
                       << " disks could not be recovered whole and were left out (see above)";
  }
  return true;
}

Status TierService::Start(engine::Engine* engine, SqliteCatalog* catalog) {
  engine_ = engine;
  const uint32_t gen = lease_->gen();
  ARCHIL_RETURN_IF_ERROR(engine->SetOwnerGen(gen));
  ARCHIL_RETURN_IF_ERROR(tier::ClaimDisks(engine, store_.get(), gen));

  tier::LogShipperOptions lo;
  lo.engine = engine;
  lo.store = store_.get();
  shipper_ = std::make_unique<tier::LogShipper>(lo);
  tier::SegmentUploaderOptions uo;
  uo.engine = engine;
  uo.store = store_.get();
  // An upload may let records ship: the shipper goes at once rather than at its next second.
  uo.on_uploaded = [shipper = shipper_.get()] { shipper->Kick(); };
  uploader_ = std::make_unique<tier::SegmentUploader>(uo);
  SetKick(uploader_.get());
  tier::SnapshotterOptions so;
  so.engine = engine;
  so.store = store_.get();
  so.clock = options_.clock;
  snapshotter_ = std::make_unique<tier::Snapshotter>(so);
  tier::CollectorOptions co;
  co.engine = engine;
  co.store = store_.get();
  co.clock = options_.clock;
  collector_ = std::make_unique<tier::Collector>(co);
  tier::CatalogShipperOptions cs;
  cs.store = store_.get();
  cs.clock = options_.clock;
  cs.version = [catalog] { return catalog->WriteCount(); };
  cs.backup = [catalog](const std::string& path) { return catalog->BackupTo(path); };
  cs.tmp_dir = options_.data_dir;
  cs.schema = SqliteCatalog::SchemaVersion();
  cs.allowed = [lease = lease_.get()] { return !lease->Fenced(); };
  catalog_ = std::make_unique<tier::CatalogShipper>(cs);

  // A disk that has no log from its creation on (it was made before this data directory ran a
  // tier) needs a base in the bucket: a snapshot of it now, before anything changes it.
  for (engine::DiskNo disk : engine->ListDisksAndHidden()) {
    ARCHIL_ASSIGN_OR_RETURN(engine::Seq last, engine->LastSeq(disk));
    if (last.value() != 0) continue;
    ARCHIL_ASSIGN_OR_RETURN(tier::ManifestRead read, tier::ReadDiskManifest(store_.get(), disk));
    if (!read.manifest.snapshots.empty()) continue;
    ARCHIL_ASSIGN_OR_RETURN(engine::Seq x, snapshotter_->TakeAndUpload(disk));
    ARCHIL_RETURN_IF_ERROR(snapshotter_->Publish(disk, x));
    ARCHIL_LOG(kInfo) << "tier: " << engine::DiskIdFromNo(disk)
                      << " had no log in the bucket: its snapshot is stored";
  }
  lease_->Start();
  uploader_->Start();
  shipper_->Start();
  snapshotter_->Start();
  collector_->Start();
  catalog_->Start();
  return Status::Ok();
}

void TierService::Drain(int bound_ms) {
  if (!engine_ || lease_->Fenced()) return;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(bound_ms);
  // The passes below run on this thread alone: one uploading and one shipping thread at a time.
  SetKick(nullptr);
  uploader_->Stop();
  shipper_->Stop();
  Status s = engine_->SealSegmentsOlderThan(0);
  for (int round = 0; s.ok() && std::chrono::steady_clock::now() < end; ++round) {
    for (Status step : {uploader_->Pass(), shipper_->Pass(), shipper_->Pass()}) {
      if (!step.ok() && s.ok()) s = step;
    }
    if (!s.ok()) break;
    if (uploader_->stats().pending_segments == 0 && shipper_->stats().waiting_records == 0) break;
  }
  Status c = catalog_->Pass();
  if (s.ok()) s = c;
  if (!s.ok()) {
    ARCHIL_LOG(kWarn) << "tier: at stop, not everything reached the bucket (it stays on this "
                         "server's disk and goes at the next start): "
                      << s.ToString();
    return;
  }
  // Everything is in the bucket: the machines stop, and the bucket is released, so that another
  // server may take it at once.
  catalog_.reset();
  collector_.reset();
  snapshotter_.reset();
  uploader_.reset();
  shipper_.reset();
  Status released = lease_->Release();
  if (released.ok()) {
    ARCHIL_LOG(kInfo) << "tier: everything this server held is in the bucket; released it";
  } else {
    ARCHIL_LOG(kWarn) << "tier: everything is in the bucket, but releasing it failed: "
                      << released.ToString();
  }
}

tier::WriteGateState TierService::GateState(engine::DiskNo disk) const {
  tier::WriteGateState g;
  g.fenced = lease_->Fenced();
  g.lease_valid = lease_->Valid();
  if (g.fenced || !g.lease_valid) {
    const tier::BucketLeaseStats l = lease_->stats();
    g.fenced_by = l.fenced_by;
    g.lease_age_ms = l.last_renewal_age_ms;
  }
  if (uploader_) {
    g.backlog = uploader_->Waiting(disk, &g.stopped);
  }
  if (g.stopped.empty() && shipper_ && shipper_->Stopped(disk)) {
    g.stopped = "its log could not be shipped: another writer used one of its names";
  }
  return g;
}

Status TierService::AdmitMutation(engine::DiskNo disk) const {
  tier::WriteGateOptions o;
  o.max_backlog_bytes = options_.max_backlog_bytes;
  return tier::AdmitWrite(GateState(disk), o);
}

nlohmann::json DiskTierStatus::ToJson() const {
  return {{"bytesToUpload", bytes_to_upload},
          {"segmentsToUpload", segments_to_upload},
          {"oldestToUploadMs", oldest_to_upload_ms},
          {"recordsToShip", records_to_ship},
          {"uploadBytesPerSecond", upload_bytes_per_second},
          {"writes", writes}};
}

DiskTierStatus TierService::DiskReport(engine::DiskNo disk) const {
  DiskTierStatus d;
  const tier::WriteGateState g = GateState(disk);
  d.bytes_to_upload = g.backlog.bytes;
  d.segments_to_upload = g.backlog.segments;
  if (g.backlog.oldest_sealed_ns != 0) {
    d.oldest_to_upload_ms = std::max<int64_t>(
        0, (options_.clock->NowMicros() * 1000 - g.backlog.oldest_sealed_ns) / 1000000);
  }
  if (shipper_) d.records_to_ship = shipper_->stats().waiting_records;
  if (uploader_) d.upload_bytes_per_second = uploader_->stats().bytes_per_second;
  tier::WriteGateOptions o;
  o.max_backlog_bytes = options_.max_backlog_bytes;
  Status admit = tier::AdmitWrite(g, o);
  d.writes = admit.ok()                                   ? "accepted"
             : admit.code() == Status::Code::kUnavailable ? "waiting: " + admit.message()
                                                          : "refused: " + admit.message();
  return d;
}

bool TierService::CatalogBehind() const { return catalog_ && catalog_->Behind(); }

Status TierService::Health(nlohmann::json* detail) const {
  const TierStatus t = Report();
  const char* lease = t.fenced ? "fenced" : (t.lease_valid ? "held" : "lapsed");
  const int64_t oldest_ms =
      t.uploads.oldest_pending_sealed_ns == 0
          ? 0
          : (options_.clock->NowMicros() * 1000 - t.uploads.oldest_pending_sealed_ns) / 1000000;
  *detail = {{"lease", lease},
             {"generation", t.owner_gen},
             {"conditionalWrites", t.enforces_conditions},
             {"segmentsToUpload", t.uploads.pending_segments},
             {"bytesToUpload", t.uploads.pending_bytes},
             {"oldestToUploadMs", oldest_ms},
             {"recordsToShip", t.shipping.waiting_records},
             {"stoppedDisks", t.uploads.stopped_disks.size() + t.shipping.stopped_disks.size()}};
  if (!t.shipping.last_error.empty()) (*detail)["lastError"] = t.shipping.last_error;
  if (!t.uploads.last_error.empty()) (*detail)["lastError"] = t.uploads.last_error;
  if (t.fenced) {
    return Status::Unavailable("fenced: this server's bucket now belongs to " + t.fenced_by);
  }
  return Status::Ok();
}

TierStatus TierService::Report() const {
  TierStatus out;
  out.store = store_->Describe();
  out.enforces_conditions = store_->EnforcesConditions();
  const tier::BucketLeaseStats l = lease_->stats();
  out.owner_gen = l.gen;
  out.lease_valid = l.valid;
  out.fenced = l.fenced;
  out.fenced_by = l.fenced_by;
  out.lease_age_ms = l.last_renewal_age_ms;
  if (uploader_) out.uploads = uploader_->stats();  // each null once Drain stopped it
  if (shipper_) out.shipping = shipper_->stats();
  if (snapshotter_) out.snapshots = snapshotter_->stats();
  if (collector_) out.collection = collector_->stats();
  if (catalog_) out.catalog = catalog_->stats();
  return out;
}

}  // namespace archil
