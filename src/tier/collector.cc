#include "tier/collector.h"

#include "base/log.h"
#include "base/strings.h"
#include "engine/records/log_record.h"
#include "tier/log_object.h"
#include "tier/manifest.h"
#include "tier/segment_uploader.h"
#include "tier/snapshotter.h"

namespace archil::tier {
struct Collector::DiskPlan {
  std::vector<std::pair<std::string, Kind>> unreachable;
  // Segment objects that no SEG record and no retained snapshot keeps: unreachable unless a
  // retained log record of some disk references them.
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> segment_candidates;
  std::set<std::pair<uint64_t, uint64_t>> segrefs;  // of the disk's retained log objects
  // Dead segments whose death has not reached the bucket yet: not judged in this pass.
  std::vector<std::string> waiting_for_log;
};

Collector::Collector(const CollectorOptions& options)
    : options_(options), loop_("collection", options.interval_ms, [this] { return Pass(); }) {}

CollectorStats Collector::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

Result<const std::vector<std::pair<uint64_t, uint64_t>>*> Collector::SegrefsOf(
    const std::string& key) {
  auto it = segrefs_.find(key);
  if (it != segrefs_.end()) return &it->second;
  ARCHIL_ASSIGN_OR_RETURN(std::string bytes, options_.store->Get(key));
  Result<LogObject> o = DecodeLogObject(bytes);
  if (!o.ok()) return o.status().WithContext(key);
  std::vector<std::pair<uint64_t, uint64_t>> refs;
  for (const std::string& rec : o->records) {
    ARCHIL_ASSIGN_OR_RETURN(engine::LogRecord r, engine::DecodeLogRecord(rec, o->disk));
    for (const auto& [disk, seg] : r.segrefs) refs.emplace_back(disk.value(), seg.value());
  }
  return &segrefs_.emplace(key, std::move(refs)).first->second;
}

Result<const std::vector<uint64_t>*> Collector::SegmentsOf(const std::string& manifest_key) {
  auto it = snapshot_segments_.find(manifest_key);
  if (it != snapshot_segments_.end()) return &it->second;
  ARCHIL_ASSIGN_OR_RETURN(std::string bytes, options_.store->Get(manifest_key));
  Result<SnapshotManifest> m = DecodeSnapshotManifest(bytes);
  if (!m.ok()) return m.status().WithContext(manifest_key);
  return &snapshot_segments_.emplace(manifest_key, std::move(m->segments)).first->second;
}

Status Collector::Plan(engine::DiskNo disk, DiskPlan* plan) {
  Result<engine::LineageInfo> lineage = options_.engine->Lineage(disk);
  if (!lineage.ok()) return Status::Ok();  // deleted meanwhile
  ARCHIL_ASSIGN_OR_RETURN(ManifestRead read, ReadDiskManifest(options_.store, disk));
  // A fenced server deletes nothing: the objects are the new owner's to judge.
  if (CurrentOwner(read.manifest) > options_.engine->owner_gen()) {
    return Status::PermissionDenied("fenced: generation " +
                                    std::to_string(CurrentOwner(read.manifest)) + " owns " +
                                    engine::DiskIdFromNo(disk).str());
  }
  const std::vector<PublishedSnapshot>& snaps = read.manifest.snapshots;
  const uint64_t older = snaps.empty() ? 0 : snaps.back().seq.value();
  const uint64_t newest = snaps.empty() ? 0 : snaps.front().seq.value();

  // Segments, in this order. The objects are listed first, so that a segment sealed after the
  // listing is not judged. Then the engine's SEG records: a segment without one died at or
  // before the disk's last seq read after them. A dead segment is judged only once its death
  // has reached the bucket (uploaded_seq at or past that seq, read before the log objects are
  // listed): the log objects listed then hold every record that ever referenced it, so no
  // stored record that a recovery replays names a segment this deletes.
  const std::string seg_prefix = SegmentUploader::ObjectPrefix(lineage->root, disk);
  ARCHIL_ASSIGN_OR_RETURN(auto seg_objects, store::ListAll(options_.store, seg_prefix));
  ARCHIL_ASSIGN_OR_RETURN(auto live, options_.engine->SegmentFilesOf(disk));
  ARCHIL_ASSIGN_OR_RETURN(engine::Seq last, options_.engine->LastSeq(disk));
  ARCHIL_ASSIGN_OR_RETURN(engine::Seq uploaded, options_.engine->UploadedSeq(disk));

  // Log objects: each one's last seq is the next one's first seq - 1.
  ARCHIL_ASSIGN_OR_RETURN(auto logs, store::ListAll(options_.store, LogObjectPrefix(disk)));
  std::vector<std::pair<std::string, uint64_t>> firsts;
  for (const store::ObjectInfo& o : logs) {
    Result<LogObjectName> name = ParseLogObjectKey(o.key);
    if (name.ok() && name->disk == disk) firsts.emplace_back(o.key, name->first_seq.value());
  }
  for (size_t i = 0; i < firsts.size(); ++i) {
    if (older > 0 && i + 1 < firsts.size() && firsts[i + 1].second - 1 <= older) {
      plan->unreachable.emplace_back(firsts[i].first, Kind::kLog);
      continue;
    }
    ARCHIL_ASSIGN_OR_RETURN(auto refs, SegrefsOf(firsts[i].first));
    plan->segrefs.insert(refs->begin(), refs->end());
  }

  // Snapshots.
  std::set<uint64_t> kept_segments;
  const std::string snap_prefix = "disks/" + engine::DiskIdFromNo(disk).str() + "/snap/";
  ARCHIL_ASSIGN_OR_RETURN(auto snap_objects, store::ListAll(options_.store, snap_prefix));
  for (const store::ObjectInfo& o : snap_objects) {
    const std::string_view rest = std::string_view(o.key).substr(snap_prefix.size());
    const size_t slash = rest.find('/');
    const std::optional<PublishedSnapshot> parsed =
        slash == std::string_view::npos ? std::nullopt : ParseSnapshotName(rest.substr(0, slash));
    if (!parsed) continue;  // not ours to judge
    const uint64_t seq = parsed->seq.value();
    bool retained = false;
    for (const PublishedSnapshot& s : snaps) retained |= s.seq.value() == seq;
    if (!retained && seq < newest) plan->unreachable.emplace_back(o.key, Kind::kSnapshot);
  }
  for (const PublishedSnapshot& s : snaps) {
    ARCHIL_ASSIGN_OR_RETURN(auto segs, SegmentsOf(SnapshotManifestKey(disk, s.owner_gen, s.seq)));
    kept_segments.insert(segs->begin(), segs->end());
  }

  for (const auto& [seg, path] : live) kept_segments.insert(seg.value());
  for (const store::ObjectInfo& o : seg_objects) {
    const std::optional<uint64_t> seg =
        ParseLowerHex(std::string_view(o.key).substr(seg_prefix.size()), 16);
    if (!seg || kept_segments.count(*seg)) {
      died_by_.erase(o.key);
      continue;
    }
    // Dead by `last` (the first pass that saw it so): judged once that much log is stored.
    const uint64_t by = died_by_.emplace(o.key, last.value()).first->second;
    if (uploaded.value() < by) {
      plan->waiting_for_log.push_back(o.key);
      continue;
    }
    plan->segment_candidates.push_back({o.key, {disk.value(), *seg}});
  }
  return Status::Ok();
}

Status Collector::Pass() {
  std::vector<DiskPlan> plans;
  std::set<std::pair<uint64_t, uint64_t>> referenced;
  Status first;
  for (engine::DiskNo disk : options_.engine->ListDisksAndHidden()) {
    DiskPlan plan;
    Status s = Plan(disk, &plan);
    if (!s.ok()) {
      // Nothing of a disk that could not be planned is deleted; its segrefs are unknown, so no
      // segment of any disk is either.
      if (first.ok()) first = s.WithContext(engine::DiskIdFromNo(disk).str());
      continue;
    }
    referenced.insert(plan.segrefs.begin(), plan.segrefs.end());
    plans.push_back(std::move(plan));
  }
  std::vector<std::pair<std::string, Kind>> unreachable;
  uint64_t waiting_for_log = 0, deleted_disks = 0;
  for (DiskPlan& plan : plans) {
    waiting_for_log += plan.waiting_for_log.size();
    for (auto& u : plan.unreachable) unreachable.push_back(std::move(u));
    if (!first.ok()) continue;
    for (auto& [key, ref] : plan.segment_candidates) {
      if (!referenced.count(ref)) unreachable.emplace_back(std::move(key), Kind::kSegment);
    }
  }
  // Deleted disks (the engine's tombstones): every object of theirs goes, the MANIFEST last, so
  // that a recovery meanwhile still finds it saying `deleting`; then the tombstone goes.
  Result<std::vector<std::pair<engine::DiskNo, engine::DiskNo>>> tombstones =
      options_.engine->DeletedDisks();
  if (!tombstones.ok() && first.ok()) first = tombstones.status();
  std::vector<engine::DiskNo> forget;
  std::vector<std::pair<engine::DiskNo, engine::DiskNo>> gone;
  if (tombstones.ok()) gone = std::move(*tombstones);
  for (const auto& [disk, root] : gone) {
    Result<std::vector<store::ObjectInfo>> own =
        store::ListAll(options_.store, "disks/" + engine::DiskIdFromNo(disk).str() + "/");
    Result<std::vector<store::ObjectInfo>> segs =
        store::ListAll(options_.store, SegmentUploader::ObjectPrefix(root, disk));
    if (!own.ok() || !segs.ok()) {
      if (first.ok()) first = own.ok() ? segs.status() : own.status();
      continue;
    }
    const std::string manifest = DiskManifestKey(disk);
    Result<ManifestRead> read = ReadDiskManifest(options_.store, disk);
    if (!read.ok() || CurrentOwner(read->manifest) > options_.engine->owner_gen()) {
      if (first.ok()) first = read.ok() ? Status::PermissionDenied("fenced") : read.status();
      continue;  // a newer owner's to judge
    }
    std::vector<std::string> keys;
    for (const auto& o : *own) keys.push_back(o.key);
    for (const auto& o : *segs) keys.push_back(o.key);
    if (keys.empty()) {
      forget.push_back(disk);
      continue;
    }
    for (const std::string& key : keys) {
      if (key == manifest && keys.size() > 1) continue;  // the others first
      unreachable.emplace_back(key, Kind::kDeletedDisk);
    }
  }
  const int64_t now = options_.clock->MonotonicNanos();
  std::map<std::string, int64_t> since;
  CollectorStats deleted;
  for (const auto& [key, kind] : unreachable) {
    auto it = unreachable_since_.find(key);
    const int64_t t = it == unreachable_since_.end() ? now : it->second;
    if (now - t < options_.grace_ms * 1000000) {
      since.emplace(key, t);
      continue;
    }
    Status s = options_.store->Delete(key);
    if (!s.ok()) {
      since.emplace(key, t);
      if (first.ok()) first = s.WithContext("delete " + key);
      continue;
    }
    segrefs_.erase(key);
    snapshot_segments_.erase(key);
    died_by_.erase(key);
    if (kind == Kind::kLog) ++deleted.deleted_log_objects;
    if (kind == Kind::kSnapshot) ++deleted.deleted_snapshot_objects;
    if (kind == Kind::kSegment) ++deleted.deleted_segments;
    if (kind == Kind::kDeletedDisk) ++deleted.deleted_disk_objects;
  }
  unreachable_since_ = std::move(since);
  for (engine::DiskNo disk : forget) {
    Status s = options_.engine->ForgetDeletedDisk(disk);
    if (!s.ok() && first.ok()) first = s;
    if (s.ok()) ++deleted_disks;
  }
  MutexLock lock(&mu_);
  stats_.deleted_disks += deleted_disks;
  stats_.deleted_log_objects += deleted.deleted_log_objects;
  stats_.deleted_snapshot_objects += deleted.deleted_snapshot_objects;
  stats_.deleted_segments += deleted.deleted_segments;
  stats_.deleted_disk_objects += deleted.deleted_disk_objects;
  stats_.waiting = unreachable_since_.size() + waiting_for_log;
  if (!first.ok()) {
    ++stats_.failed_passes;
    stats_.last_error = first.ToString();
  }
  return first;
}

}  // namespace archil::tier
