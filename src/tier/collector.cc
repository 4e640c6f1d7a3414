#include "tier/collector.h"

#include "base/log.h"
#include "base/strings.h"
#include "engine/log_record.h"
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
  const std::vector<PublishedSnapshot>& snaps = read.manifest.snapshots;
  const uint64_t older = snaps.empty() ? 0 : snaps.back().seq.value();
  const uint64_t newest = snaps.empty() ? 0 : snaps.front().seq.value();

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

  // Segments: listed first, so that a segment sealed after the listing is not judged.
  const std::string seg_prefix = SegmentUploader::ObjectPrefix(lineage->root, disk);
  ARCHIL_ASSIGN_OR_RETURN(auto seg_objects, store::ListAll(options_.store, seg_prefix));
  ARCHIL_ASSIGN_OR_RETURN(auto live, options_.engine->SegmentFilesOf(disk));
  for (const auto& [seg, path] : live) kept_segments.insert(seg.value());
  for (const store::ObjectInfo& o : seg_objects) {
    const std::optional<uint64_t> seg =
        ParseLowerHex(std::string_view(o.key).substr(seg_prefix.size()), 16);
    if (!seg || kept_segments.count(*seg)) continue;
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
  for (DiskPlan& plan : plans) {
    for (auto& u : plan.unreachable) unreachable.push_back(std::move(u));
    if (!first.ok()) continue;
    for (auto& [key, ref] : plan.segment_candidates) {
      if (!referenced.count(ref)) unreachable.emplace_back(std::move(key), Kind::kSegment);
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
    if (kind == Kind::kLog) ++deleted.deleted_log_objects;
    if (kind == Kind::kSnapshot) ++deleted.deleted_snapshot_objects;
    if (kind == Kind::kSegment) ++deleted.deleted_segments;
  }
  unreachable_since_ = std::move(since);
  MutexLock lock(&mu_);
  stats_.deleted_log_objects += deleted.deleted_log_objects;
  stats_.deleted_snapshot_objects += deleted.deleted_snapshot_objects;
  stats_.deleted_segments += deleted.deleted_segments;
  stats_.waiting = unreachable_since_.size();
  if (!first.ok()) {
    ++stats_.failed_passes;
    stats_.last_error = first.ToString();
  }
  return first;
}

}  // namespace archil::tier
