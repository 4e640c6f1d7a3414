// Engine: what the tier asks of the engine: the sealed segments it has to upload, and the record
// that one is stored (docs/tiering.md §1).
#include <algorithm>

#include "engine/engine.h"
#include "engine/fs/disk_fs_ops.h"
#include "engine/records/keys.h"
#include "engine/records/meta_records.h"

namespace archil::engine {

Result<std::vector<std::pair<SegNo, SegRecord>>> Engine::SegRecordsOf(DiskNo disk) {
  std::vector<std::pair<SegNo, SegRecord>> out;
  const std::string prefix = MetaKey(disk, MetaType::kSeg);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), core_.cfs[Cf::kMeta]));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    ARCHIL_ASSIGN_OR_RETURN(MetaKeyParts k, ParseMetaKey(it->key().ToStringView()));
    ARCHIL_ASSIGN_OR_RETURN(SegRecord rec, DecodeSeg(it->value().ToStringView()));
    out.emplace_back(SegNo(k.id), rec);
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan segments"));
  return out;
}

Result<std::vector<SealedSegment>> Engine::SealedSegments() {
  std::vector<DiskNo> disks;
  {
    MutexLock lock(&mu_);
    for (const auto& [n, d] : disks_) disks.emplace_back(n);
  }
  std::vector<SealedSegment> out;
  for (DiskNo disk : disks) {
    std::optional<DiskLineage> lineage = lineages_.Get(disk);
    if (!lineage) continue;  // deleted meanwhile
    ARCHIL_ASSIGN_OR_RETURN(auto records, SegRecordsOf(disk));
    for (const auto& [seg, rec] : records) {
      if (rec.state != SegState::kSealed) continue;
      out.push_back({disk, lineage->root, seg, segments_->Path(disk, seg), rec.sealed});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const SealedSegment& a, const SealedSegment& b) {
    return a.sealed_ns < b.sealed_ns;
  });
  return out;
}

Status Engine::SealSegmentsOlderThan(int64_t age_ns) {
  std::vector<std::shared_ptr<DiskFs>> disks;
  {
    MutexLock lock(&mu_);
    for (auto& [n, d] : disks_) disks.push_back(d);
  }
  for (const auto& d : disks) ARCHIL_RETURN_IF_ERROR(d->SealIfOlderThan(age_ns));
  return Status::Ok();
}

Status Engine::SegmentUploaded(DiskNo disk, SegNo seg, bool stored_by_link) {
  ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<DiskFs> fs, Head(disk));
  return fs->MarkUploaded(seg, stored_by_link);
}

}  // namespace archil::engine
