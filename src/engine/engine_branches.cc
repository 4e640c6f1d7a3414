// Engine: checkpoints, branches and disk deletion across a lineage (docs/formats.md §5.3-5.7).
#include <algorithm>
#include <cerrno>
#include <optional>

#include "engine/engine.h"
#include "engine/fs/disk_fs_ops.h"

namespace archil::engine {
namespace {

constexpr size_t kMaxBranchName = 100;
constexpr size_t kMaxIdempotencyKey = 255;

Status NoCheckpointNamed(std::string_view name) {
  return Status::NotFound("no checkpoint '" + std::string(name) + "'");
}

BranchInfo BranchInfoOf(const BranchRecord& b, std::string_view name) {
  return BranchInfo{b.child,      b.parent,  std::string(name), b.from_checkpoint,
                    b.fork_epoch, b.created, b.idempotency_key, false};
}

bool ValidBranchName(std::string_view name) {
  if (name.empty() || name.size() > kMaxBranchName) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Result<Epoch> Engine::Checkpoint(DiskNo disk, std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(DiskFs * fs, Disk(disk));
  return fs->Checkpoint(name);
}

Result<std::vector<CheckpointInfo>> Engine::Checkpoints(DiskNo disk) {
  ARCHIL_ASSIGN_OR_RETURN(DiskFs * fs, Disk(disk));
  return fs->Checkpoints();
}

Status Engine::DeleteCheckpoint(DiskNo disk, std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(DiskFs * fs, Disk(disk));
  return fs->DeleteCheckpoint(name);
}

Result<uint64_t> Engine::StoredBytes(DiskNo disk) {
  ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<DiskFs> fs, Head(disk));
  return fs->StoredBytes();
}

Result<uint64_t> Engine::CheckpointUniqueBytes(DiskNo disk, std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(DiskFs * fs, Disk(disk));
  return fs->CheckpointUniqueBytes(name);
}

Result<std::shared_ptr<DiskFs>> Engine::OpenCheckpoint(DiskNo disk, std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(DiskFs * head, Disk(disk));
  ARCHIL_ASSIGN_OR_RETURN(Epoch e, head->CheckpointEpoch(name));
  return std::make_shared<DiskFs>(&core_, LevelRef{disk, e}, head->dir_hash_key(),
                                  head->lineage_index());
}

Result<std::shared_ptr<DiskFs>> Engine::OpenSnapshot(DiskNo disk) {
  ARCHIL_ASSIGN_OR_RETURN(DiskFs * head, Disk(disk));
  rocksdb::DB* db = db_.get();
  std::shared_ptr<const rocksdb::Snapshot> pinned(
      db->GetSnapshot(), [db](const rocksdb::Snapshot* s) { db->ReleaseSnapshot(s); });
  return std::make_shared<DiskFs>(&core_, LevelRef{disk, kHeadView}, head->dir_hash_key(),
                                  head->lineage_index(), std::move(pinned));
}

Status Engine::CreateBranch(DiskNo parent, std::string_view checkpoint, DiskNo child,
                            std::string_view branch_name) {
  BranchRequest request{parent, std::string(checkpoint), child, std::string(branch_name), ""};
  return CreateBranch(request).status();
}

Result<BranchCreated> Engine::CreateBranch(const BranchRequest& req) {
  if (req.child.value() == 0) return Status::InvalidArgument("disk number 0 is invalid");
  if (!ValidBranchName(req.name)) {
    return Status::InvalidArgument("branch names are 1-100 of A-Z a-z 0-9 _ -");
  }
  if (req.idempotency_key.size() > kMaxIdempotencyKey) {
    return Status::InvalidArgument("an Idempotency-Key is at most 255 bytes");
  }
  ARCHIL_ASSIGN_OR_RETURN(DiskFs * head, Disk(req.parent));
  ARCHIL_ASSIGN_OR_RETURN(Epoch fork, head->CheckpointEpoch(req.checkpoint));
  const int64_t now = options_.clock->NowMicros() * 1000;
  DiskRecord rec;
  std::optional<BranchInfo> earlier;  // the branch a retry with the same key gets
  Status s = queue_->Commit([&](Txn& t) -> Status {
    rocksdb::ColumnFamilyHandle* meta = core_.cfs[Cf::kMeta];
    ARCHIL_ASSIGN_OR_RETURN(std::string pv, t.Get(meta, MetaKey(req.parent, MetaType::kDisk)));
    ARCHIL_ASSIGN_OR_RETURN(DiskRecord p, DecodeDisk(pv));
    if (!req.idempotency_key.empty()) {
      ARCHIL_ASSIGN_OR_RETURN(earlier, FindByIdempotencyKey(t, p.root, req.idempotency_key));
      if (earlier) {
        if (earlier->parent != req.parent || earlier->from_checkpoint != req.checkpoint ||
            earlier->name != req.name) {
          return Status::AlreadyExists(
              "this Idempotency-Key was used for another request (branch '" + earlier->name +
              "'): use a new key for a new branch");
        }
        return Status::Ok();
      }
    }
    const std::string child_key = MetaKey(req.child, MetaType::kDisk);
    Result<std::string> exists = t.Get(meta, child_key);
    if (exists.ok()) return Status::AlreadyExists("disk exists");
    if (exists.status().code() != Status::Code::kNotFound) return exists.status();
    // The checkpoint may have gone since it was looked up.
    Result<std::string> cv = t.Get(meta, MetaCkptKey(req.parent, req.checkpoint));
    if (!cv.ok()) {
      if (cv.status().code() == Status::Code::kNotFound) return NoCheckpointNamed(req.checkpoint);
      return cv.status();
    }
    ARCHIL_ASSIGN_OR_RETURN(CkptRecord ckpt, DecodeCkpt(*cv));
    if (ckpt.epoch != fork) return Status::Busy("checkpoint changed; retry");
    if (ckpt.state != CkptState::kCommitted) {
      return Status::FailedPrecondition("checkpoint '" + req.checkpoint + "' is not committed yet");
    }
    // The lineage root hands out the branch's inode-number space.
    const std::string root_key = MetaKey(p.root, MetaType::kDisk);
    ARCHIL_ASSIGN_OR_RETURN(std::string rv, t.Get(meta, root_key));
    ARCHIL_ASSIGN_OR_RETURN(DiskRecord root, DecodeDisk(rv));
    if (root.next_lineage_index > kMaxLineageIndex) {
      return Status::Errno(ENOSPC, "lineage has no branch numbers left");
    }
    const std::string branch_key = MetaBranchKey(p.root, req.name);
    Result<std::string> named = t.Get(meta, branch_key);
    if (named.ok()) return Status::AlreadyExists("branch '" + req.name + "' exists");
    if (named.status().code() != Status::Code::kNotFound) return named.status();
    const uint32_t index = root.next_lineage_index++;
    t.Put(meta, root_key, EncodeDisk(root));
    ARCHIL_RETURN_IF_ERROR(head->AddBranchPin(t, fork, +1));

    rec.state = DiskState::kActive;
    rec.flags = p.flags;
    rec.lineage_index = index;
    rec.root = p.root;
    rec.parent = req.parent;
    rec.fork_epoch = fork;
    rec.read_parent = req.parent;
    rec.read_parent_epoch = fork;
    rec.depth = static_cast<uint16_t>(p.depth + 1);
    rec.owner_gen = p.owner_gen;
    // Every inherited version was born at or before the fork: the branch's epochs start above.
    rec.cur_epoch = Epoch(fork.value() + 1);
    rec.created = now;
    rec.dir_hash_key = p.dir_hash_key;
    t.Put(meta, child_key, EncodeDisk(rec));
    CountersRecord counters;
    counters.next_ino = kFirstInoCounter;
    t.Put(meta, MetaKey(req.child, MetaType::kCounters), EncodeCounters(counters));
    BranchRecord br;
    br.child = req.child;
    br.parent = req.parent;
    br.fork_epoch = fork;
    br.created = now;
    br.from_checkpoint = req.checkpoint;
    br.idempotency_key = req.idempotency_key;
    t.Put(meta, branch_key, EncodeBranch(br));
    return Status::Ok();
  });
  ARCHIL_RETURN_IF_ERROR(s);
  if (earlier) {
    MutexLock lock(&mu_);
    earlier->hidden = hidden_.count(earlier->disk.value()) > 0;
    return BranchCreated{*earlier, false};
  }
  lineages_.Add(req.child, {rec.lineage_index, rec.root, req.parent, fork});
  SipHashKey key;
  std::copy(rec.dir_hash_key.begin(), rec.dir_hash_key.end(), key.begin());
  auto fs =
      std::make_shared<DiskFs>(&core_, LevelRef{req.child, kHeadView}, key, rec.lineage_index);
  fs->RestoreEpochs(rec.cur_epoch, {});
  {
    MutexLock lock(&mu_);
    disks_[req.child.value()] = fs;
  }
  BranchInfo info{req.child, req.parent,          req.name, req.checkpoint, fork,
                  now,       req.idempotency_key, false};
  return BranchCreated{std::move(info), true};
}

Result<std::optional<BranchInfo>> Engine::FindByIdempotencyKey(Txn& t, DiskNo root,
                                                               std::string_view key) {
  const std::string names = MetaKey(root, MetaType::kBranch);
  auto it = t.NewIterator(core_.cfs[Cf::kMeta]);
  for (it->Seek(names); it->Valid() && it->key().starts_with(names); it->Next()) {
    ARCHIL_ASSIGN_OR_RETURN(BranchRecord b, DecodeBranch(it->value().ToStringView()));
    if (b.idempotency_key != key) continue;
    ARCHIL_ASSIGN_OR_RETURN(MetaKeyParts k, ParseMetaKey(it->key().ToStringView()));
    return std::optional<BranchInfo>(BranchInfoOf(b, k.name));
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan branches"));
  return std::optional<BranchInfo>();
}

Result<std::vector<BranchInfo>> Engine::Branches(DiskNo disk) {
  ARCHIL_ASSIGN_OR_RETURN(LineageInfo lineage, Lineage(disk));
  const std::string names = MetaKey(lineage.root, MetaType::kBranch);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), core_.cfs[Cf::kMeta]));
  std::vector<BranchInfo> out;
  for (it->Seek(names); it->Valid() && it->key().starts_with(names); it->Next()) {
    ARCHIL_ASSIGN_OR_RETURN(BranchRecord b, DecodeBranch(it->value().ToStringView()));
    ARCHIL_ASSIGN_OR_RETURN(MetaKeyParts k, ParseMetaKey(it->key().ToStringView()));
    out.push_back(BranchInfoOf(b, k.name));
  }
  ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan branches"));
  {
    MutexLock lock(&mu_);
    for (BranchInfo& b : out) b.hidden = hidden_.count(b.disk.value()) > 0;
  }
  std::stable_sort(out.begin(), out.end(), [](const BranchInfo& a, const BranchInfo& b) {
    return a.created_ns < b.created_ns;
  });
  return out;
}

Result<LineageInfo> Engine::Lineage(DiskNo disk) {
  bool hidden = false;
  {
    MutexLock lock(&mu_);
    if (!disks_.count(disk.value())) return Status::NotFound("no such disk");
    hidden = hidden_.count(disk.value()) > 0;
  }
  std::optional<DiskLineage> l = lineages_.Get(disk);
  if (!l) return Status::NotFound("no such disk");
  return LineageInfo{l->root, l->parent, hidden};
}

Status Engine::DeleteDisk(DiskNo disk) {
  {
    MutexLock lock(&mu_);
    if (!disks_.count(disk.value()) || hidden_.count(disk.value())) {
      return Status::NotFound("no such disk");
    }
  }
  for (;;) {
    const bool keep_for_branches = lineages_.Children(disk) > 0;
    std::optional<DiskLineage> lineage = lineages_.Get(disk);
    if (!lineage) return Status::NotFound("no such disk");
    std::shared_ptr<DiskFs> parent;
    if (lineage->parent.value() != 0) {
      ARCHIL_ASSIGN_OR_RETURN(parent, Head(lineage->parent));
    }
    Status s = queue_->Commit([&](Txn& t) -> Status {
      rocksdb::ColumnFamilyHandle* meta = core_.cfs[Cf::kMeta];
      const std::string key = MetaKey(disk, MetaType::kDisk);
      Result<std::string> v = t.Get(meta, key);
      if (!v.ok()) {
        return v.status().code() == Status::Code::kNotFound ? Status::NotFound("no such disk")
                                                            : v.status();
      }
      ARCHIL_ASSIGN_OR_RETURN(DiskRecord rec, DecodeDisk(*v));
      if (rec.state == DiskState::kDeleting) return Status::NotFound("no such disk");
      rec.state = keep_for_branches ? DiskState::kHidden : DiskState::kDeleting;
      t.Put(meta, key, EncodeDisk(rec));
      if (keep_for_branches || !parent) return Status::Ok();
      // The branch's pin on its fork, and its name, go with it.
      ARCHIL_RETURN_IF_ERROR(parent->AddBranchPin(t, rec.fork_epoch, -1));
      const std::string names = MetaKey(rec.root, MetaType::kBranch);
      std::vector<std::string> drop;
      {
        auto it = t.NewIterator(meta);
        for (it->Seek(names); it->Valid() && it->key().starts_with(names); it->Next()) {
          ARCHIL_ASSIGN_OR_RETURN(BranchRecord b, DecodeBranch(it->value().ToStringView()));
          if (b.child == disk) drop.emplace_back(it->key().ToStringView());
        }
        ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan branches"));
      }
      for (const std::string& k : drop) t.Delete(meta, k);
      return Status::Ok();
    });
    ARCHIL_RETURN_IF_ERROR(s);
    if (keep_for_branches) {
      MutexLock lock(&mu_);
      hidden_.insert(disk.value());
      return Status::Ok();
    }
    {
      MutexLock lock(&mu_);
      disks_.erase(disk.value());
      hidden_.erase(disk.value());
    }
    lineages_.Remove(disk);
    if (options_.keep_segments_until_uploaded) {
      // With a tier, its space goes once the bucket says it is deleted (DeletionMarked): a
      // recovery must not bring it back.
      MutexLock lock(&mu_);
      to_mark_[disk.value()] = lineage->root.value();
    } else {
      QueuePurge(disk);
    }
    if (!parent) return Status::Ok();
    // What the branch's fork alone kept can go now; a hidden parent goes with its last branch.
    ARCHIL_RETURN_IF_ERROR(parent->CollectReleased());
    bool parent_hidden = false;
    {
      MutexLock lock(&mu_);
      parent_hidden = hidden_.count(lineage->parent.value()) > 0;
    }
    if (!parent_hidden || lineages_.Children(lineage->parent) > 0) return Status::Ok();
    disk = lineage->parent;
  }
}

}  // namespace archil::engine
