#include "tier/snapshotter.h"

#include <set>

#include "base/crc32c.h"
#include "base/log.h"
#include "engine/records/keys.h"
#include "tier/log_object.h"
#include "tier/snapshot_part.h"

namespace archil::tier {

Result<ManifestRead> ReadDiskManifest(store::ObjectStore* store, engine::DiskNo disk) {
  const std::string key = DiskManifestKey(disk);
  ManifestRead out;
  out.manifest.disk = disk;
  // The etag first: if the object changes before the read, the swap that uses it fails.
  Result<store::ObjectInfo> head = store->Head(key);
  if (!head.ok()) {
    if (head.status().code() == Status::Code::kNotFound) return out;
    return head.status();
  }
  Result<std::string> bytes = store->Get(key);
  if (!bytes.ok()) return bytes.status();
  Result<DiskManifest> m = DecodeDiskManifest(*bytes);
  if (!m.ok()) return m.status().WithContext(key);
  if (m->disk != disk) return Status::Corruption(key + " is another disk's manifest");
  out.manifest = std::move(*m);
  out.etag = head->etag;
  return out;
}

Snapshotter::Snapshotter(const SnapshotterOptions& options)
    : options_(options),
      started_ns_(options.clock->MonotonicNanos()),
      loop_("snapshots", options.interval_ms, [this] { return Pass(); }) {}

SnapshotterStats Snapshotter::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

Result<engine::Seq> Snapshotter::TakeAndUpload(engine::DiskNo disk) {
  SnapshotManifest m;
  m.disk = disk;
  m.owner_gen = options_.engine->owner_gen();
  m.created_ns = options_.clock->NowMicros() * 1000;
  std::unique_ptr<SnapshotPartWriter> part;
  uint64_t bytes = 0;
  auto flush = [&]() -> Status {
    const uint32_t entries = part->entries();
    std::string encoded = part->Finish();
    part.reset();
    // A part left by an attempt that never wrote SNAPSHOT is unreferenced: overwrite it.
    ARCHIL_RETURN_IF_ERROR(
        options_.store
            ->Put(SnapshotPartKey(disk, m.owner_gen, m.seq, static_cast<uint32_t>(m.parts.size())),
                  encoded, store::PutOptions{})
            .status());
    m.parts.push_back({encoded.size(), Crc32c(encoded), entries});
    bytes += encoded.size();
    return Status::Ok();
  };
  const std::string seg_prefix = engine::MetaKey(disk, engine::MetaType::kSeg);
  bool stored = false;
  Status s = options_.engine->ScanDiskState(
      disk,
      [&](engine::Seq x) -> Status {
        m.seq = x;
        // A snapshot at X under this generation is the disk's state at X, whoever stored it
        // (an earlier attempt that a crash interrupted before it published): keep it.
        Result<store::ObjectInfo> head =
            options_.store->Head(SnapshotManifestKey(disk, m.owner_gen, x));
        if (head.ok()) {
          stored = true;
          return Status::AlreadyExists("stored already");  // ends the scan
        }
        return head.status().code() == Status::Code::kNotFound ? Status::Ok() : head.status();
      },
      [&](engine::Cf cf, std::string_view key, std::string_view value) -> Status {
        if (cf == engine::Cf::kMeta && key.starts_with(seg_prefix)) {
          ARCHIL_ASSIGN_OR_RETURN(engine::MetaKeyParts k, engine::ParseMetaKey(key));
          m.segments.push_back(k.id);
        }
        if (!part) {
          part = std::make_unique<SnapshotPartWriter>(disk, m.seq,
                                                      static_cast<uint32_t>(m.parts.size()));
        }
        part->Add(cf, key, value);
        return part->size() >= options_.part_bytes ? flush() : Status::Ok();
      });
  if (stored) return m.seq;
  ARCHIL_RETURN_IF_ERROR(s);
  if (part || m.parts.empty()) {
    if (!part) part = std::make_unique<SnapshotPartWriter>(disk, m.seq, 0);
    ARCHIL_RETURN_IF_ERROR(flush());
  }
  Result<std::string> put =
      options_.store->Put(SnapshotManifestKey(disk, m.owner_gen, m.seq), EncodeSnapshotManifest(m),
                          store::PutOptions{store::Condition::kIfAbsent, ""});
  if (!put.ok() && put.status().code() != Status::Code::kAlreadyExists) return put.status();
  MutexLock lock(&mu_);
  ++stats_.taken;
  stats_.parts += m.parts.size();
  stats_.bytes += bytes;
  return m.seq;
}

Status Snapshotter::Publish(engine::DiskNo disk, engine::Seq seq) {
  ARCHIL_ASSIGN_OR_RETURN(engine::Seq uploaded, options_.engine->UploadedSeq(disk));
  if (uploaded.value() < seq.value()) {
    return Status::FailedPrecondition(
        "snapshot of " + engine::DiskIdFromNo(disk).str() + " at " + std::to_string(seq.value()) +
        " waits: its log is stored up to " + std::to_string(uploaded.value()) + " only");
  }
  ARCHIL_ASSIGN_OR_RETURN(ManifestRead read, ReadDiskManifest(options_.store, disk));
  const uint32_t gen = options_.engine->owner_gen();
  // A newer owner has the disk (this server was fenced), or it is being deleted: nothing of this
  // server's may become what a reader starts from.
  if (CurrentOwner(read.manifest) > gen) {
    return Status::PermissionDenied(
        "fenced: generation " + std::to_string(CurrentOwner(read.manifest)) + " owns " +
        engine::DiskIdFromNo(disk).str() + ", this server is " + std::to_string(gen));
  }
  if (read.manifest.deleting) return Status::Ok();
  DiskManifest next = read.manifest;
  const std::vector<PublishedSnapshot>& old = read.manifest.snapshots;
  if (!old.empty() && old.front().seq.value() >= seq.value()) return Status::Ok();  // published
  next.snapshots = {PublishedSnapshot{gen, seq}};
  if (!old.empty()) next.snapshots.push_back(old.front());
  store::PutOptions put;
  put.condition = read.etag.empty() ? store::Condition::kIfAbsent : store::Condition::kIfMatch;
  put.etag = read.etag;
  Result<std::string> done =
      options_.store->Put(DiskManifestKey(disk), EncodeDiskManifest(next), put);
  if (!done.ok()) {
    const Status::Code c = done.status().code();
    if (c == Status::Code::kAlreadyExists || c == Status::Code::kFailedPrecondition) {
      return Status::FailedPrecondition(DiskManifestKey(disk) +
                                        " changed while it was swapped; the next pass retries");
    }
    return done.status();
  }
  MutexLock lock(&mu_);
  ++stats_.published;
  return Status::Ok();
}

Status Snapshotter::SnapshotDisk(engine::DiskNo disk) {
  auto pending = pending_.find(disk.value());
  if (pending == pending_.end()) {
    ARCHIL_ASSIGN_OR_RETURN(ManifestRead read, ReadDiskManifest(options_.store, disk));
    const uint64_t newest =
        read.manifest.snapshots.empty() ? 0 : read.manifest.snapshots.front().seq.value();
    ARCHIL_ASSIGN_OR_RETURN(engine::Seq uploaded, options_.engine->UploadedSeq(disk));
    if (uploaded.value() <= newest) return Status::Ok();  // nothing stored since
    uint64_t log_bytes = 0;
    ARCHIL_ASSIGN_OR_RETURN(auto logs, store::ListAll(options_.store, LogObjectPrefix(disk)));
    for (const store::ObjectInfo& o : logs) {
      Result<LogObjectName> name = ParseLogObjectKey(o.key);
      if (name.ok() && name->first_seq.value() > newest) log_bytes += o.size;
    }
    auto last = last_taken_ns_.find(disk.value());
    const int64_t since = last == last_taken_ns_.end() ? started_ns_ : last->second;
    const bool old = options_.clock->MonotonicNanos() - since >= options_.max_age_ms * 1000000;
    if (log_bytes < options_.log_bytes && !old) return Status::Ok();
    Result<engine::Seq> x = TakeAndUpload(disk);
    if (!x.ok()) {
      // A disk deleted meanwhile has no log left to snapshot.
      return x.status().code() == Status::Code::kNotFound ? Status::Ok() : x.status();
    }
    last_taken_ns_[disk.value()] = options_.clock->MonotonicNanos();
    pending = pending_.emplace(disk.value(), *x).first;
  }
  Status s = Publish(disk, pending->second);
  if (s.code() == Status::Code::kFailedPrecondition) return Status::Ok();  // waits
  if (s.ok()) pending_.erase(pending);
  return s;
}

Status Snapshotter::Pass() {
  Status first;
  const std::vector<engine::DiskNo> disks = options_.engine->ListDisksAndHidden();
  // A disk deleted meanwhile has nothing left to publish.
  const std::set<uint64_t> held = [&] {
    std::set<uint64_t> out;
    for (engine::DiskNo d : disks) out.insert(d.value());
    return out;
  }();
  std::erase_if(pending_, [&](const auto& p) { return !held.count(p.first); });
  std::erase_if(last_taken_ns_, [&](const auto& p) { return !held.count(p.first); });
  for (engine::DiskNo disk : disks) {
    Status s = SnapshotDisk(disk);
    if (!s.ok() && first.ok()) first = s.WithContext(engine::DiskIdFromNo(disk).str());
  }
  MutexLock lock(&mu_);
  stats_.waiting = pending_.size();
  if (!first.ok()) {
    ++stats_.failed_passes;
    stats_.last_error = first.ToString();
  }
  return first;
}

}  // namespace archil::tier
