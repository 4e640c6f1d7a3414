#include "tier/log_shipper.h"

#include "base/log.h"
#include "engine/records/log_record.h"
#include "tier/log_object.h"
#include "tier/manifest.h"
#include "tier/snapshotter.h"

namespace archil::tier {

LogShipper::LogShipper(const LogShipperOptions& options)
    : options_(options), loop_("log shipping", options.interval_ms, [this] { return Pass(); }) {}

Result<engine::Seq> LogShipper::Adopt(engine::DiskNo disk, const std::string& key) {
  ARCHIL_ASSIGN_OR_RETURN(std::string stored, options_.store->Get(key));
  Result<LogObject> o = DecodeLogObject(stored);
  if (!o.ok()) return o.status().WithContext("stored " + key);
  if (o->disk != disk) return Status::Corruption("stored " + key + " is another disk's log");
  ARCHIL_ASSIGN_OR_RETURN(
      auto ours, options_.engine->OutboxRecords(disk, engine::Seq(o->first_seq.value() - 1),
                                                o->records.size()));
  if (ours.size() != o->records.size()) {
    return Status::Corruption("stored " + key + " holds records this server's outbox does not");
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    if (ours[i].second != o->records[i]) {
      return Status::Corruption("stored " + key + " differs from this server's record " +
                                std::to_string(ours[i].first.value()) +
                                ": another writer stored this name");
    }
  }
  return o->last_seq();
}

Status LogShipper::ShipDisk(engine::DiskNo disk, uint64_t* waiting) {
  for (;;) {
    ARCHIL_ASSIGN_OR_RETURN(engine::Seq uploaded, options_.engine->UploadedSeq(disk));
    ARCHIL_ASSIGN_OR_RETURN(auto page, options_.engine->OutboxRecords(disk, uploaded, 4096));
    if (page.empty()) return Status::Ok();
    LogObject o;
    // The generation in the object's name (docs/tiering.md §5): a server that took over never
    // writes a name the old owner could have used.
    o.owner_gen = options_.engine->owner_gen();
    o.disk = disk;
    o.first_seq = page.front().first;
    size_t bytes = 0;
    bool blocked = false;
    for (auto& [seq, rec] : page) {
      if (seq.value() != o.first_seq.value() + o.records.size()) {
        return Status::Internal("outbox of " + engine::DiskIdFromNo(disk).str() + " has a gap at " +
                                std::to_string(seq.value()));
      }
      ARCHIL_ASSIGN_OR_RETURN(engine::LogRecord r, engine::DecodeLogRecord(rec, disk));
      for (const auto& [seg_disk, seg] : r.segrefs) {
        ARCHIL_ASSIGN_OR_RETURN(bool stored, options_.engine->SegmentStored(seg_disk, seg));
        if (!stored) blocked = true;
      }
      for (const auto& [other, needed] : r.depends_on) {
        ARCHIL_ASSIGN_OR_RETURN(engine::Seq shipped, options_.engine->UploadedSeq(other));
        if (shipped.value() < needed.value()) blocked = true;
      }
      if (blocked || (!o.records.empty() && bytes + rec.size() > options_.max_object_bytes)) break;
      bytes += rec.size();
      o.records.push_back(std::move(rec));
    }
    if (o.records.empty()) {
      *waiting += page.size();
      return Status::Ok();  // the oldest record waits for its segment's upload
    }
    const std::string key = LogObjectKey(disk, o.owner_gen, o.first_seq);
    const std::string encoded = EncodeLogObject(o);
    engine::Seq through = o.last_seq();
    bool adopted = false;
    Result<std::string> put = options_.store->Put(key, encoded, {store::Condition::kIfAbsent, ""});
    if (!put.ok()) {
      if (put.status().code() != Status::Code::kAlreadyExists) {
        return put.status().WithContext("ship " + key);
      }
      ARCHIL_ASSIGN_OR_RETURN(through, Adopt(disk, key));
      adopted = true;
    }
    ARCHIL_RETURN_IF_ERROR(options_.engine->LogShipped(disk, through));
    {
      MutexLock lock(&mu_);
      ++stats_.shipped_objects;
      stats_.shipped_records += through.value() - o.first_seq.value() + 1;
      stats_.shipped_bytes += encoded.size();
      if (adopted) ++stats_.adopted_objects;
    }
    if (blocked && !adopted) {
      *waiting += page.size() - o.records.size();
      return Status::Ok();
    }
  }
}

Status LogShipper::MarkDeleted(engine::DiskNo disk) {
  for (int attempt = 0;; ++attempt) {
    ARCHIL_ASSIGN_OR_RETURN(ManifestRead read, ReadDiskManifest(options_.store, disk));
    if (CurrentOwner(read.manifest) > options_.engine->owner_gen()) {
      return Status::PermissionDenied("fenced: a newer owner has " +
                                      engine::DiskIdFromNo(disk).str());
    }
    if (!read.manifest.deleting) {
      DiskManifest next = read.manifest;
      next.deleting = true;
      store::PutOptions put;
      put.condition = read.etag.empty() ? store::Condition::kIfAbsent : store::Condition::kIfMatch;
      put.etag = read.etag;
      Result<std::string> done =
          options_.store->Put(DiskManifestKey(disk), EncodeDiskManifest(next), put);
      if (!done.ok()) {
        const Status::Code c = done.status().code();
        const bool lost =
            c == Status::Code::kAlreadyExists || c == Status::Code::kFailedPrecondition;
        if (lost && attempt < 5) continue;  // the manifest changed meanwhile: read it again
        return done.status();
      }
    }
    ARCHIL_RETURN_IF_ERROR(options_.engine->DeletionMarked(disk));
    MutexLock lock(&mu_);
    ++stats_.deletions_marked;
    return Status::Ok();
  }
}

Status LogShipper::Pass() {
  std::set<uint64_t> stopped;
  {
    MutexLock lock(&mu_);
    stopped = stats_.stopped_disks;
  }
  Status first;
  uint64_t waiting = 0;
  for (engine::DiskNo disk : options_.engine->ListDisksAndHidden()) {
    if (stopped.count(disk.value())) continue;
    Status s = ShipDisk(disk, &waiting);
    if (s.ok()) continue;
    // A disk purged meanwhile has nothing left to ship.
    if (s.code() == Status::Code::kNotFound && !options_.engine->Lineage(disk).ok()) continue;
    if (s.code() == Status::Code::kCorruption) {
      ARCHIL_LOG(kError) << "tier: shipping the log of " << engine::DiskIdFromNo(disk).str()
                         << " stops: " << s.ToString();
      stopped.insert(disk.value());
    }
    if (first.ok()) first = s;
    if (s.code() != Status::Code::kCorruption) break;  // the store: the rest waits
  }
  // Deleted disks: marked in the bucket, after which the engine frees their space.
  for (const auto& [disk, root] : options_.engine->DeletionsToMark()) {
    Status s = MarkDeleted(disk);
    if (!s.ok() && first.ok()) first = s.WithContext("mark " + engine::DiskIdFromNo(disk).str());
  }
  MutexLock lock(&mu_);
  stats_.stopped_disks.insert(stopped.begin(), stopped.end());
  stats_.waiting_records = waiting;
  if (first.ok()) {
    stats_.last_error.clear();
  } else {
    ++stats_.failed_passes;
    stats_.last_error = first.ToString();
  }
  return first;
}

LogShipperStats LogShipper::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

bool LogShipper::Stopped(engine::DiskNo disk) const {
  MutexLock lock(&mu_);
  return stats_.stopped_disks.count(disk.value()) > 0;
}

}  // namespace archil::tier
