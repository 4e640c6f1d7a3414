// DiskFs: checkpoints, the pinned epochs, and collecting what released epochs kept
// (docs/formats.md §4.1 EPOCH/CKPT, §5.2, §5.5).
#include <cerrno>

#include "engine/fs/disk_fs_ops.h"
#include "engine/records/segusage_record.h"

namespace archil::engine {
namespace {

constexpr size_t kMaxCheckpointName = 100;
constexpr size_t kCollectBatch = 1000;  // deadlist entries freed per commit

bool ValidCheckpointName(std::string_view name) {
  if (name.empty() || name.size() > kMaxCheckpointName) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return name != "." && name != "..";
}

Status NoCheckpoint(std::string_view name) {
  return Status::NotFound("no checkpoint '" + std::string(name) + "'");
}

}  // namespace

void DiskFs::RestoreEpochs(Epoch cur, std::map<uint64_t, EpochRecord> epochs) {
  epochs_.Restore(cur, std::move(epochs));
}

Result<Epoch> DiskFs::Checkpoint(std::string_view name, const CommitHooks& hooks) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  if (!ValidCheckpointName(name)) {
    return Status::InvalidArgument("checkpoint names are 1-100 of A-Z a-z 0-9 . _ -");
  }
  return core_->queue->CommitWith<Epoch>(
      [&](Txn& t) -> Result<Epoch> {
        Ops ops(this);
        const std::string ckpt_key = MetaCkptKey(disk_, name);
        Result<std::string> have = t.Get(ops.cf(Cf::kMeta), ckpt_key);
        if (have.ok())
          return Status::AlreadyExists("checkpoint '" + std::string(name) + "' exists");
        if (have.status().code() != Status::Code::kNotFound) return have.status();
        const std::string disk_key = MetaKey(disk_, MetaType::kDisk);
        ARCHIL_ASSIGN_OR_RETURN(std::string dv, t.Get(ops.cf(Cf::kMeta), disk_key));
        ARCHIL_ASSIGN_OR_RETURN(DiskRecord d, DecodeDisk(dv));
        const Epoch e = d.cur_epoch;
        d.cur_epoch = Epoch(e.value() + 1);
        t.Put(ops.cf(Cf::kMeta), disk_key, EncodeDisk(d));
        EpochRecord er;
        er.state = EpochState::kCheckpoint;
        er.frozen_at = ops.NowNs();
        er.checkpoint_name = std::string(name);
        t.Put(ops.cf(Cf::kMeta), MetaEpochKey(disk_, e), EncodeEpoch(er));
        CkptRecord c;
        c.state = CkptState::kCommitted;
        c.epoch = e;
        c.created = c.committed = er.frozen_at;
        t.Put(ops.cf(Cf::kMeta), ckpt_key, EncodeCkpt(c));
        // The bump is visible at once to the mutations after this one in the group.
        epochs_.Freeze(e, er);
        t.OnAbort([this, e] { epochs_.Unfreeze(e); });
        if (hooks.epilogue) hooks.epilogue(t, CommitResult{nullptr, e.value(), er.frozen_at});
        return e;
      },
      hooks.on_queued);
}

Result<Epoch> DiskFs::CheckpointEpoch(std::string_view name) {
  std::optional<Epoch> e = epochs_.CheckpointNamed(name);
  if (!e) return NoCheckpoint(name);
  return *e;
}

std::vector<CheckpointInfo> DiskFs::Checkpoints() { return epochs_.Checkpoints(); }

Status DiskFs::DeleteCheckpoint(std::string_view name) {
  ARCHIL_RETURN_IF_ERROR(Writable());
  Epoch k;
  bool collect = false;
  Status s = core_->queue->Commit([&](Txn& t) -> Status {
    Ops ops(this);
    const std::string ckpt_key = MetaCkptKey(disk_, name);
    Result<std::string> cv = t.Get(ops.cf(Cf::kMeta), ckpt_key);
    if (!cv.ok()) {
      return cv.status().code() == Status::Code::kNotFound ? NoCheckpoint(name) : cv.status();
    }
    ARCHIL_ASSIGN_OR_RETURN(CkptRecord c, DecodeCkpt(*cv));
    k = c.epoch;
    const std::string epoch_key = MetaEpochKey(disk_, k);
    ARCHIL_ASSIGN_OR_RETURN(std::string ev, t.Get(ops.cf(Cf::kMeta), epoch_key));
    ARCHIL_ASSIGN_OR_RETURN(EpochRecord er, DecodeEpoch(ev));
    er.state = EpochState::kReleased;
    t.Delete(ops.cf(Cf::kMeta), ckpt_key);
    t.Put(ops.cf(Cf::kMeta), epoch_key, EncodeEpoch(er));
    collect = !er.pinned();
    SetEpoch(t, k, er);
    return Status::Ok();
  });
  ARCHIL_RETURN_IF_ERROR(s);
  return collect ? CollectEpoch(k) : Status::Ok();
}

Status DiskFs::AddBranchPin(Txn& t, Epoch e, int delta) {
  const std::string key = MetaEpochKey(disk_, e);
  Result<std::string> v = t.Get(core_->cfs[Cf::kMeta], key);
  if (!v.ok()) {
    if (v.status().code() == Status::Code::kNotFound) {
      return Status::Corruption("branch pin on epoch " + std::to_string(e.value()) +
                                " without its EPOCH record");
    }
    return v.status();
  }
  ARCHIL_ASSIGN_OR_RETURN(EpochRecord er, DecodeEpoch(*v));
  if (delta < 0 && er.branch_pins == 0) return Status::Corruption("branch pin count below zero");
  er.branch_pins = static_cast<uint32_t>(static_cast<int64_t>(er.branch_pins) + delta);
  t.Put(core_->cfs[Cf::kMeta], key, EncodeEpoch(er));
  SetEpoch(t, e, er);
  return Status::Ok();
}

void DiskFs::SetEpoch(Txn& t, Epoch e, const EpochRecord& r) {
  std::optional<EpochRecord> previous = epochs_.Set(e, r);
  t.OnAbort([this, e, previous] { epochs_.PutBack(e, previous); });
}

Status DiskFs::CollectReleased() {
  for (Epoch k : epochs_.ReleasedUnpinned()) ARCHIL_RETURN_IF_ERROR(CollectEpoch(k));
  return Status::Ok();
}

Result<std::vector<std::string>> DiskFs::KeptOnlyBy(KvReader& r, Epoch k, EpochTable::Neighbours n,
                                                    size_t limit) {
  const std::string disk_prefix = DiskPrefix(disk_);
  std::vector<std::string> entries;
  auto it = r.NewIterator(core_->cfs[Cf::kDead]);
  uint64_t d = k.value() + 1;
  while (d <= n.next && entries.size() < limit) {
    it->Seek(DeadSeekKey(disk_, Epoch(d), Epoch(n.prev + 1)));
    if (!it->Valid() || !it->key().starts_with(disk_prefix)) break;
    ARCHIL_ASSIGN_OR_RETURN(DeadKeyParts p, ParseDeadKey(it->key().ToStringView()));
    if (p.death.value() > n.next) break;
    if (p.death.value() != d) {
      d = p.death.value();
      continue;
    }
    for (; it->Valid() && entries.size() < limit; it->Next()) {
      ARCHIL_ASSIGN_OR_RETURN(DeadKeyParts q, ParseDeadKey(it->key().ToStringView()));
      if (q.disk != disk_ || q.death.value() != d || q.birth > k) break;
      entries.emplace_back(it->key().ToStringView());
    }
    ++d;
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan deadlists"));
  return entries;
}

Status DiskFs::CollectEpoch(Epoch k) {
  for (bool done = false; !done;) {
    Status s = core_->queue->Commit([&](Txn& t) -> Status {
      ARCHIL_ASSIGN_OR_RETURN(std::vector<std::string> entries,
                              KeptOnlyBy(t, k, epochs_.PinnedNeighbours(k), kCollectBatch));
      for (const std::string& key : entries) {
        ARCHIL_ASSIGN_OR_RETURN(DeadKeyParts p, ParseDeadKey(key));
        switch (p.kind) {
          case DeadKind::kData:
            ARCHIL_RETURN_IF_ERROR(FreeBlocks(t, p.blocks));
            break;
          case DeadKind::kHist:
            t.Delete(core_->cfs[Cf::kHist], HistKey(disk_, p.tag, p.suffix, p.death));
            break;
          case DeadKind::kHead: {
            ARCHIL_ASSIGN_OR_RETURN(std::string head, HeadKeyOf(disk_, p.tag, p.suffix));
            Cf cf = p.tag == HistTag::kDentry  ? Cf::kDentry
                    : p.tag == HistTag::kXattr ? Cf::kXattr
                    : p.tag == HistTag::kChunk ? Cf::kChunk
                                               : Cf::kInode;
            t.Delete(core_->cfs[cf], head);
            break;
          }
        }
        t.Delete(core_->cfs[Cf::kDead], key);
      }
      if (entries.size() < kCollectBatch) {
        done = true;
        t.Delete(core_->cfs[Cf::kMeta], MetaEpochKey(disk_, k));
        t.OnApply([this, k] { epochs_.ForgetIfUnpinned(k); });
      }
      return Status::Ok();
    });
    ARCHIL_RETURN_IF_ERROR(s.WithContext("collect checkpoint epoch " + std::to_string(k.value())));
  }
  return Status::Ok();
}

}  // namespace archil::engine

namespace archil::engine {

Result<uint64_t> DiskFs::CheckpointUniqueBytes(std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(Epoch k, CheckpointEpoch(name));
  DbView view = ReadView();
  ARCHIL_ASSIGN_OR_RETURN(std::vector<std::string> entries,
                          KeptOnlyBy(view, k, epochs_.PinnedNeighbours(k), SIZE_MAX));
  uint64_t blocks = 0;
  for (const std::string& key : entries) {
    ARCHIL_ASSIGN_OR_RETURN(DeadKeyParts p, ParseDeadKey(key));
    if (p.kind == DeadKind::kData) blocks += p.blocks.nblk;
  }
  return blocks * kBlockSize;
}

Result<uint64_t> DiskFs::StoredBytes() {
  DbView view = ReadView();
  const std::string prefix = DiskPrefix(disk_);
  auto it = view.NewIterator(core_->cfs[Cf::kSegUsage]);
  uint64_t blocks = 0;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    ARCHIL_ASSIGN_OR_RETURN(SegUsageRecord u, DecodeSegUsage(it->value().ToStringView()));
    blocks += u.live_blocks;
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan segment liveness"));
  return blocks * kBlockSize;
}

}  // namespace archil::engine
