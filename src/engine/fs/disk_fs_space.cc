// DiskFs: the open segment, and segment liveness: blocks are SET in their segment's bitmap when a
// commit points an extent at them and CLEARed when they are freed; a sealed segment with no live
// block left (and, with a tier, uploaded) is deleted (docs/formats.md §4.10, §6.2).
#include <cerrno>

#include "base/log.h"
#include "engine/fs/disk_fs_ops.h"
#include "engine/records/segusage_record.h"

namespace archil::engine {

Status DiskFs::Ops::OpenNewSegment(Txn& t) {  // REQUIRES: KeepSegmentCursor(t) called
  ARCHIL_ASSIGN_OR_RETURN(CountersRecord counters, LoadCounters(t));
  if (counters.next_seg == UINT32_MAX) return Status::Errno(ENOSPC, "segment numbers exhausted");
  // Its number carries the owner generation: a server that took over from another never reuses
  // one of that server's segment names, even where their counters meet.
  SegNo seg = MakeSegNo(c_->owner_gen ? c_->owner_gen->load() : 1, ++counters.next_seg);
  Status made = c_->segments->Create(disk_, seg);
  if (!made.ok() && made.sys_errno() != EEXIST) return made;
  // A segment opened by a mutation that then failed was never recorded: its file holds nothing
  // anyone points at, so it is emptied (its blocks back to the file system) and reused.
  if (!made.ok()) ARCHIL_RETURN_IF_ERROR(c_->segments->Empty(disk_, seg));
  fs_->open_seg_.Start(seg);
  return Status::Ok();
}

Status DiskFs::Ops::Seal(Txn& t, SegNo seg, SegRecord rec) {
  // The data is durable in the segment, so its intents can go with this batch.
  ARCHIL_RETURN_IF_ERROR(c_->segments->Sync(disk_, seg));
  std::string prefix = IntentKey(disk_, seg, 0).substr(0, 16);
  ARCHIL_RETURN_IF_ERROR(DeletePrefix(t, Cf::kIntent, prefix));
  rec.state = SegState::kSealed;
  rec.sealed = NowNs();
  t.Put(cf(Cf::kMeta), MetaSegKey(disk_, seg), EncodeSeg(rec));
  if (c_->on_sealed) t.OnDurable(c_->on_sealed);
  return Status::Ok();
}

Status DiskFs::SealIfOlderThan(int64_t age_ns) {
  return core_->queue->Commit([&](Txn& t) -> Status {
    // Not yet recorded: no committed extent points into it, so nothing waits for its upload.
    std::optional<SegNo> open = open_seg_.current(/*recorded_only=*/true);
    if (!open) return Status::Ok();
    const SegNo seg = *open;
    Ops ops(this);
    ARCHIL_ASSIGN_OR_RETURN(std::string v, t.Get(core_->cfs[Cf::kMeta], MetaSegKey(disk_, seg)));
    ARCHIL_ASSIGN_OR_RETURN(SegRecord rec, DecodeSeg(v));
    if (rec.state != SegState::kOpen || ops.NowNs() - rec.created < age_ns) return Status::Ok();
    ARCHIL_RETURN_IF_ERROR(ops.Seal(t, seg, rec));
    KeepSegmentCursor(t);
    open_seg_.Close();  // the next write opens a new segment (Allocate)
    return MaybeKill(t, seg);
  });
}

Result<std::pair<SegNo, uint32_t>> DiskFs::Ops::Allocate(Txn& t, uint32_t nblk) {
  // Blocks handed out to a mutation that then fails are handed out again.
  fs_->KeepSegmentCursor(t);
  const OpenSegment::Room room = fs_->open_seg_.RoomFor(nblk, c_->segment_blocks);
  const bool full = room.full;
  const SegNo old = room.seg;
  bool reuse = false;
  if (full) {
    Result<std::string> v = t.Get(cf(Cf::kMeta), MetaSegKey(disk_, old));
    if (!v.ok() && v.status().code() != Status::Code::kNotFound) return v.status();
    if (!v.ok()) {
      // Never recorded: only mutations that failed wrote into it, so nothing points at it and
      // its blocks are taken again from the start.
      reuse = true;
      fs_->open_seg_.Rewind();
    } else {
      ARCHIL_ASSIGN_OR_RETURN(SegRecord rec, DecodeSeg(*v));
      ARCHIL_RETURN_IF_ERROR(Seal(t, old, rec));
    }
  }
  if (!room.open || (full && !reuse)) ARCHIL_RETURN_IF_ERROR(OpenNewSegment(t));
  // A segment sealed with nothing live in it (all overwritten while open) dies at once.
  if (full && !reuse) ARCHIL_RETURN_IF_ERROR(fs_->MaybeKill(t, old));
  const OpenSegment::Taken taken = fs_->open_seg_.Take(nblk);
  const SegNo seg = taken.seg;
  if (!taken.recorded) {
    // Until a batch that records this segment commits, every batch that uses it records it, so
    // its number is never handed out twice.
    ARCHIL_ASSIGN_OR_RETURN(CountersRecord counters, LoadCounters(t));
    counters.next_seg = std::max<uint32_t>(counters.next_seg, static_cast<uint32_t>(seg.value()));
    PutCounters(t, counters);
    SegRecord rec;
    rec.state = SegState::kOpen;
    rec.created = NowNs();
    rec.root = disk_;
    t.Put(cf(Cf::kMeta), MetaSegKey(disk_, seg), EncodeSeg(rec));
    // Its liveness starts all clear (a later mutation of the same group may already have SET
    // blocks in it: keep them).
    const std::string usage = SegUsageKey(disk_, seg);
    Result<std::string> have = t.Get(cf(Cf::kSegUsage), usage);
    if (!have.ok() && have.status().code() != Status::Code::kNotFound) return have.status();
    if (!have.ok()) {
      t.Put(cf(Cf::kSegUsage), usage, EncodeSegUsage(SegUsageRecord::Empty(c_->segment_blocks)));
    }
    OpenSegment* open = &fs_->open_seg_;
    t.OnApply([open, seg] { open->Recorded(seg); });
  }
  return std::make_pair(seg, taken.blk);
}

Status DiskFs::MarkLive(Txn& t, SegNo seg, uint32_t blk, uint32_t nblk) {
  SegUsageOp op;
  op.op = SegUsageOpType::kSet;
  op.start_blk = blk;
  op.nblk = nblk;
  t.Merge(core_->cfs[Cf::kSegUsage], SegUsageKey(disk_, seg), EncodeSegUsageOp(op));
  // Counted for the open segment (its cursor, restored with it if this prepare fails, was kept
  // by the Allocate that handed these blocks out).
  open_seg_.AddLive(seg, nblk);
  return Status::Ok();
}

Status DiskFs::FreeBlocks(Txn& t, const DeadBlocks& b) {
  if (b.seg_disk != disk_) return Status::Corruption("freeing blocks of another disk's segment");
  SegUsageOp op;
  op.op = SegUsageOpType::kClear;
  op.start_blk = b.seg_blk;
  op.nblk = b.nblk;
  t.Merge(core_->cfs[Cf::kSegUsage], SegUsageKey(disk_, b.seg_no), EncodeSegUsageOp(op));
  if (open_seg_.holds(b.seg_no)) {
    KeepSegmentCursor(t);
    open_seg_.SubLive(b.seg_no, b.nblk);
  }
  // A refused write reclaims first (a harmless extra reclaim if this prepare then fails).
  if (core_->space) core_->space->Freed();
  // Once per segment, when the prepare is done: a batch of removes frees many files of one
  // segment, and each check reads the segment's usage through every operand merged before it.
  const SegNo seg = b.seg_no;
  t.AtEnd("kill " + std::to_string(seg.value()),
          [this, seg](Txn& at) { return MaybeKill(at, seg); });
  return Status::Ok();
}

void DiskFs::KeepSegmentCursor(Txn& t) {
  t.OnAbort([this, saved = open_seg_.Save()] { open_seg_.Restore(saved); });
}

Status DiskFs::MaybeKill(Txn& t, SegNo seg, bool any_size) {
  const auto [open_one, handed_out, live] = open_seg_.UsageOf(seg);
  // The open segment is retired only once nothing in it is live by the count kept in memory (so
  // that an overwrite inside it does not read its liveness record) and a fair share of it was
  // handed out: a disk that writes and deletes small files would otherwise make a new segment
  // file for each.
  if (open_one && !any_size &&
      (live != 0 || handed_out < std::max<uint32_t>(1, core_->segment_blocks / 8))) {
    return Status::Ok();
  }
  const std::string seg_key = MetaSegKey(disk_, seg);
  Result<std::string> v = t.Get(core_->cfs[Cf::kMeta], seg_key);
  // The open segment may not be recorded yet: nothing committed points into it.
  if (open_one && !v.ok() && v.status().code() == Status::Code::kNotFound) return Status::Ok();
  if (!v.ok()) return v.status();
  ARCHIL_ASSIGN_OR_RETURN(SegRecord rec, DecodeSeg(*v));
  if (rec.state == SegState::kOpen && !open_one) return Status::Ok();
  // With a tier, the records that wrote into the segment must reach the bucket first.
  if (!open_one && core_->keep_until_uploaded && rec.state != SegState::kUploaded) {
    return Status::Ok();
  }
  const std::string usage_key = SegUsageKey(disk_, seg);
  ARCHIL_ASSIGN_OR_RETURN(std::string u, t.Get(core_->cfs[Cf::kSegUsage], usage_key));
  ARCHIL_ASSIGN_OR_RETURN(SegUsageRecord usage, DecodeSegUsage(u));
  if (usage.live_blocks != 0) return Status::Ok();
  if (open_one) return RetireOpen(t, seg, rec);
  // Dead: its records go with this batch, its file after it (a file without a SEG record is
  // removed at the next open if the unlink is lost).
  t.Delete(core_->cfs[Cf::kMeta], seg_key);
  t.Delete(core_->cfs[Cf::kSegUsage], usage_key);
  SegmentFiles* files = core_->segments;
  DiskNo disk = disk_;
  SpaceGuard* space = core_->space;
  t.OnDurable([files, disk, seg, space] {
    Status s = files->Remove(disk, seg);
    if (!s.ok()) ARCHIL_LOG(kWarn) << "engine: removing dead segment: " << s.ToString();
    if (space) space->Freed();
  });
  return Status::Ok();
}

Status DiskFs::RetireOpen(Txn& t, SegNo seg, const SegRecord& rec) {
  KeepSegmentCursor(t);
  open_seg_.Close();  // the next write opens a new segment (Allocate)
  Ops ops(this);
  // With a tier the log records not yet shipped may name its blocks: sealed, it is uploaded,
  // and dies then (MarkUploaded).
  if (core_->keep_until_uploaded) return ops.Seal(t, seg, rec);
  // Nothing names its blocks any more: neither its data nor its intents are needed.
  ARCHIL_RETURN_IF_ERROR(ops.DeletePrefix(t, Cf::kIntent, IntentKey(disk_, seg, 0).substr(0, 16)));
  t.Delete(core_->cfs[Cf::kMeta], MetaSegKey(disk_, seg));
  t.Delete(core_->cfs[Cf::kSegUsage], SegUsageKey(disk_, seg));
  SegmentFiles* files = core_->segments;
  DiskNo disk = disk_;
  SpaceGuard* space = core_->space;
  t.OnDurable([files, disk, seg, space] {
    Status s = files->Remove(disk, seg);
    if (!s.ok()) ARCHIL_LOG(kWarn) << "engine: removing a dead open segment: " << s.ToString();
    if (space) space->Freed();
  });
  return Status::Ok();
}

Result<bool> DiskFs::RetireDeadOpenSegment() {
  bool retired = false;
  ARCHIL_RETURN_IF_ERROR(core_->queue->Commit([&](Txn& t) -> Status {
    retired = false;
    std::optional<SegNo> seg = open_seg_.current();
    if (!seg) return Status::Ok();
    ARCHIL_RETURN_IF_ERROR(MaybeKill(t, *seg, /*any_size=*/true));
    retired = !open_seg_.current();
    return Status::Ok();
  }));
  return retired;
}

Status DiskFs::MarkUploaded(SegNo seg, bool stored_by_link) {
  return core_->queue->Commit([&](Txn& t) -> Status {
    const std::string seg_key = MetaSegKey(disk_, seg);
    Result<std::string> v = t.Get(core_->cfs[Cf::kMeta], seg_key);
    if (!v.ok()) {
      if (v.status().code() == Status::Code::kNotFound) {
        return Status::NotFound("no segment " + std::to_string(seg.value()));
      }
      return v.status();
    }
    ARCHIL_ASSIGN_OR_RETURN(SegRecord rec, DecodeSeg(*v));
    if (rec.state == SegState::kOpen) {
      return Status::FailedPrecondition("an open segment cannot be uploaded");
    }
    if (rec.state == SegState::kUploaded) return Status::Ok();
    rec.state = SegState::kUploaded;
    rec.uploaded = core_->clock->NowMicros() * 1000;
    if (stored_by_link) rec.flags |= kSegFlagStoredByLink;
    t.Put(core_->cfs[Cf::kMeta], seg_key, EncodeSeg(rec));
    return MaybeKill(t, seg);
  });
}

Status DiskFs::SweepSegments() {
  // Segments left open by the last run are sealed (nothing appends to them again), files that
  // no SEG record names are removed, and sealed segments with nothing live die.
  std::vector<SegNo> sealed;
  Status s = core_->queue->Commit([&](Txn& t) -> Status {
    sealed.clear();
    const std::string prefix = MetaKey(disk_, MetaType::kSeg);
    std::vector<std::pair<std::string, SegRecord>> reseal;
    {
      auto it = t.NewIterator(core_->cfs[Cf::kMeta]);
      for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
        ARCHIL_ASSIGN_OR_RETURN(MetaKeyParts k, ParseMetaKey(it->key().ToStringView()));
        ARCHIL_ASSIGN_OR_RETURN(SegRecord rec, DecodeSeg(it->value().ToStringView()));
        if (rec.state == SegState::kOpen) {
          rec.state = SegState::kSealed;
          rec.flags |= kSegFlagRecordsIncomplete;
          rec.sealed = core_->clock->NowMicros() * 1000;
          reseal.emplace_back(it->key().ToString(), rec);
        }
        sealed.emplace_back(k.id);
      }
      ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan segments"));
    }
    for (auto& [key, rec] : reseal) t.Put(core_->cfs[Cf::kMeta], key, EncodeSeg(rec));
    return Status::Ok();
  });
  ARCHIL_RETURN_IF_ERROR(s);
  ARCHIL_RETURN_IF_ERROR(core_->segments->RemoveUnlisted(disk_, sealed));
  return core_->queue->Commit([&](Txn& t) -> Status {
    for (SegNo seg : sealed) ARCHIL_RETURN_IF_ERROR(MaybeKill(t, seg));
    return Status::Ok();
  });
}

}  // namespace archil::engine
