#include "server_metrics.h"

#include "base/clock.h"
#include "base/log.h"

namespace archil {

void AddServerCollectors(metrics::Registry* registry, engine::Engine* engine,
                         server::DiskServer* disk_server, Catalog* catalog,
                         const TierService* tier) {
  registry->AddCollector([engine, disk_server](metrics::Sink& s) {
    const engine::CommitStats c = engine->commit_stats();
    s.Counter("archil_engine_mutations_total", "Mutations committed by the engine.", {},
              static_cast<double>(c.ops));
    s.Counter("archil_engine_commit_groups_total",
              "RocksDB writes the engine's mutations went out in (several share one).", {},
              static_cast<double>(c.groups));
    s.Counter("archil_engine_wal_syncs_total", "WAL syncs the engine's commits issued.", {},
              static_cast<double>(c.syncs));
    s.Gauge("archil_disk_connections", "Disk protocol connections open.", {},
            static_cast<double>(disk_server->connections()));
    s.Gauge("archil_disk_sessions", "Disk protocol sessions (mounts) bound.", {},
            static_cast<double>(disk_server->sessions()));
    s.Gauge("archil_disk_buffered_bytes", "Request bytes the disk server holds now, in bytes.", {},
            static_cast<double>(disk_server->buffered_bytes()));
    s.Counter("archil_disk_starved_frames_total",
              "Request frames that waited for the buffer budget (per connection, disk or total).",
              {}, static_cast<double>(disk_server->starved()));
    s.Counter("archil_disk_evicted_connections_total",
              "Unauthenticated connections closed to make room for new ones.", {},
              static_cast<double>(disk_server->evicted()));
    s.Counter("archil_disk_held_requests_total",
              "Requests held because their disk was over its share of the CPU.", {},
              static_cast<double>(disk_server->held()));
    s.Counter("archil_disk_accept_pauses_total",
              "Times accepting paused because letting connections in was over its CPU share.", {},
              static_cast<double>(disk_server->accept_pauses()));
  });
  registry->AddCollector([catalog](metrics::Sink& s) {
    Result<Catalog::Counts> c = catalog->Count();
    if (!c.ok()) {
      ARCHIL_LOG(kWarn) << "metrics: the catalog's counts: " << c.status().ToString();
      return;
    }
    s.Gauge("archil_catalog_disks", "Disks in the catalog (root disks; branches are the engine's).",
            {}, static_cast<double>(c->disks));
    s.Gauge("archil_catalog_purge_backlog_disks", "Deleted disks whose data is not yet purged.", {},
            static_cast<double>(c->deleting_disks));
    s.Gauge("archil_catalog_disk_tokens", "Disk tokens in the catalog.", {},
            static_cast<double>(c->disk_tokens));
    s.Gauge("archil_catalog_api_keys", "API keys in the catalog.", {},
            static_cast<double>(c->api_keys));
  });
  if (tier == nullptr) return;
  registry->AddCollector([tier](metrics::Sink& s) {
    const store::CountingStore& calls = tier->store_calls();
    s.Family("archil_store_requests_total",
             "Object store calls ended, by kind and outcome "
             "(after the store's own retries; not_found and refused are answers, not faults).",
             metrics::Type::kCounter);
    for (size_t k = 0; k < store::kStoreCallKinds; ++k) {
      const auto kind = static_cast<store::StoreCall>(k);
      for (size_t o = 0; o < store::kStoreOutcomes; ++o) {
        s.Sample("archil_store_requests_total",
                 {{"kind", store::StoreCallName(kind)},
                  {"outcome", store::StoreOutcomeName(static_cast<store::StoreOutcome>(o))}},
                 static_cast<double>(calls.counts(kind).ended[o].load()));
      }
    }
    s.Family("archil_store_request_seconds_total", "Seconds spent in object store calls, by kind.",
             metrics::Type::kCounter);
    for (size_t k = 0; k < store::kStoreCallKinds; ++k) {
      const auto kind = static_cast<store::StoreCall>(k);
      s.Sample("archil_store_request_seconds_total", {{"kind", store::StoreCallName(kind)}},
               static_cast<double>(calls.counts(kind).nanos.load()) / 1e9);
    }
    uint64_t sent = 0, received = 0;
    for (size_t k = 0; k < store::kStoreCallKinds; ++k) {
      sent += calls.counts(static_cast<store::StoreCall>(k)).bytes_sent.load();
      received += calls.counts(static_cast<store::StoreCall>(k)).bytes_received.load();
    }
    s.Counter("archil_store_sent_bytes_total", "Object data stored by puts, in bytes.", {},
              static_cast<double>(sent));
    s.Counter("archil_store_received_bytes_total", "Object data read by gets, in bytes.", {},
              static_cast<double>(received));

    const TierStatus t = tier->Report();
    s.Gauge("archil_tier_lease_held", "1 while this server holds its bucket's lease.", {},
            t.lease_valid ? 1 : 0);
    s.Gauge("archil_tier_fenced", "1 once another server has taken the bucket over.", {},
            t.fenced ? 1 : 0);
    s.Gauge("archil_tier_upload_backlog_bytes",
            "Sealed segment data not yet in the bucket, in bytes.", {},
            static_cast<double>(t.uploads.pending_bytes));
    s.Gauge("archil_tier_upload_backlog_segments", "Sealed segments not yet in the bucket.", {},
            static_cast<double>(t.uploads.pending_segments));
    double oldest_s = 0;
    if (t.uploads.oldest_pending_sealed_ns != 0) {
      // Sealed times are the engine clock's (microseconds since the epoch, in ns).
      const int64_t now = SystemClock::Instance().NowMicros() * 1000;
      oldest_s = static_cast<double>(now - t.uploads.oldest_pending_sealed_ns) / 1e9;
      if (oldest_s < 0) oldest_s = 0;
    }
    s.Gauge("archil_tier_upload_oldest_seconds",
            "How long the oldest sealed segment not yet in the bucket has waited, in seconds.", {},
            oldest_s);
    s.Counter("archil_tier_uploaded_bytes_total", "Segment data stored in the bucket, in bytes.",
              {}, static_cast<double>(t.uploads.uploaded_bytes));
    s.Counter("archil_tier_shipped_records_total", "Log records stored in the bucket.", {},
              static_cast<double>(t.shipping.shipped_records));
    s.Gauge("archil_tier_records_to_ship", "Log records not yet in the bucket.", {},
            static_cast<double>(t.shipping.waiting_records));
    s.Counter("archil_tier_catalog_copies_total", "Copies of the catalog stored in the bucket.", {},
              static_cast<double>(t.catalog.copies));
    s.Gauge("archil_tier_catalog_behind",
            "1 while the catalog has changes that no copy in the bucket holds yet.", {},
            tier->CatalogBehind() ? 1 : 0);
    s.Family("archil_tier_failed_passes_total",
             "Passes of a tier component that failed (an object-store error, most often).",
             metrics::Type::kCounter);
    const std::pair<const char*, uint64_t> failed[] = {{"upload", t.uploads.failed_passes},
                                                       {"ship", t.shipping.failed_passes},
                                                       {"snapshot", t.snapshots.failed_passes},
                                                       {"collect", t.collection.failed_passes},
                                                       {"catalog", t.catalog.failed_passes}};
    for (const auto& [what, n] : failed) {
      s.Sample("archil_tier_failed_passes_total", {{"component", what}}, static_cast<double>(n));
    }
    s.Gauge("archil_tier_stopped_disks", "Disks whose data can no longer reach the bucket.", {},
            static_cast<double>(t.uploads.stopped_disks.size() + t.shipping.stopped_disks.size()));
  });
}

}  // namespace archil
