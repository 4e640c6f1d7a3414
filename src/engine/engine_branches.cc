// Engine: checkpoints, branches and disk deletion across a lineage (docs/formats.md §5.3-5.7).
#include <cerrno>

#include "engine/disk_fs_ops.h"
#include "engine/engine.h"

namespace archil::engine {
namespace {

constexpr size_t kMaxBranchName = 100;

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
  ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fs, Disk(disk));
  return static_cast<DiskFs*>(fs)->Checkpoint(name);
}

Result<std::vector<CheckpointInfo>> Engine::Checkpoints(DiskNo disk) {
  ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fs, Disk(disk));
  return static_cast<DiskFs*>(fs)->Checkpoints();
}

Status Engine::DeleteCheckpoint(DiskNo disk, std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fs, Disk(disk));
  return static_cast<DiskFs*>(fs)->DeleteCheckpoint(name);
}

Result<uint64_t> Engine::StoredBytes(DiskNo disk) {
  ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<DiskFs> fs, Head(disk));
  return fs->StoredBytes();
}

Result<uint64_t> Engine::CheckpointUniqueBytes(DiskNo disk, std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fs, Disk(disk));
  return static_cast<DiskFs*>(fs)->CheckpointUniqueBytes(name);
}

Result<std::shared_ptr<posix::FileSystem>> Engine::OpenCheckpoint(DiskNo disk,
                                                                  std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fs, Disk(disk));
  auto* head = static_cast<DiskFs*>(fs);
  ARCHIL_ASSIGN_OR_RETURN(Epoch e, head->CheckpointEpoch(name));
  return std::shared_ptr<posix::FileSystem>(std::make_shared<DiskFs>(
      &core_, LevelRef{disk, e}, head->dir_hash_key(), head->lineage_index()));
}

Status Engine::CreateBranch(DiskNo parent, std::string_view checkpoint, DiskNo child,
                            std::string_view branch_name) {
  if (child.value() == 0) return Status::InvalidArgument("disk number 0 is invalid");
  if (!ValidBranchName(branch_name)) {
    return Status::InvalidArgument("branch names are 1-100 of A-Z a-z 0-9 _ -");
  }
  ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * pfs, Disk(parent));
  auto* head = static_cast<DiskFs*>(pfs);
  ARCHIL_ASSIGN_OR_RETURN(Epoch fork, head->CheckpointEpoch(checkpoint));
  const int64_t now = options_.clock->NowMicros() * 1000;
  DiskRecord rec;
  Status s = queue_->Commit([&](Txn& t) -> Status {
    rocksdb::ColumnFamilyHandle* meta = core_.cfs[Cf::kMeta];
    const std::string child_key = MetaKey(child, MetaType::kDisk);
    Result<std::string> exists = t.Get(meta, child_key);
    if (exists.ok()) return Status::AlreadyExists("disk exists");
    if (exists.status().code() != Status::Code::kNotFound) return exists.status();
    // The checkpoint may have gone since it was looked up.
    Result<std::string> cv = t.Get(meta, MetaCkptKey(parent, checkpoint));
    if (!cv.ok()) {
      if (cv.status().code() == Status::Code::kNotFound) {
        return Status::NotFound("no checkpoint '" + std::string(checkpoint) + "'");
      }
      return cv.status();
    }
    ARCHIL_ASSIGN_OR_RETURN(CkptRecord ckpt, DecodeCkpt(*cv));
    if (ckpt.epoch != fork) return Status::Busy("checkpoint changed; retry");
    ARCHIL_ASSIGN_OR_RETURN(std::string pv, t.Get(meta, MetaKey(parent, MetaType::kDisk)));
    ARCHIL_ASSIGN_OR_RETURN(DiskRecord p, DecodeDisk(pv));
    // The lineage root hands out the branch's inode-number space.
    const std::string root_key = MetaKey(p.root, MetaType::kDisk);
    ARCHIL_ASSIGN_OR_RETURN(std::string rv, t.Get(meta, root_key));
    ARCHIL_ASSIGN_OR_RETURN(DiskRecord root, DecodeDisk(rv));
    if (root.next_lineage_index > kMaxLineageIndex) {
      return Status::Errno(ENOSPC, "lineage has no branch numbers left");
    }
    const std::string branch_key = MetaBranchKey(p.root, branch_name);
    Result<std::string> named = t.Get(meta, branch_key);
    if (named.ok()) {
      return Status::AlreadyExists("branch '" + std::string(branch_name) + "' exists");
    }
    if (named.status().code() != Status::Code::kNotFound) return named.status();
    const uint32_t index = root.next_lineage_index++;
    t.Put(meta, root_key, EncodeDisk(root));
    ARCHIL_RETURN_IF_ERROR(head->AddBranchPin(t, fork, +1));

    rec.state = DiskState::kActive;
    rec.flags = p.flags;
    rec.lineage_index = index;
    rec.root = p.root;
    rec.parent = parent;
    rec.fork_epoch = fork;
    rec.read_parent = parent;
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
    t.Put(meta, MetaKey(child, MetaType::kCounters), EncodeCounters(counters));
    BranchRecord br;
    br.child = child;
    br.parent = parent;
    br.fork_epoch = fork;
    br.created = now;
    br.from_checkpoint = std::string(checkpoint);
    t.Put(meta, branch_key, EncodeBranch(br));
    return Status::Ok();
  });
  ARCHIL_RETURN_IF_ERROR(s);
  lineages_.Add(child, {rec.lineage_index, rec.root, parent, fork});
  SipHashKey key;
  std::copy(rec.dir_hash_key.begin(), rec.dir_hash_key.end(), key.begin());
  auto fs = std::make_shared<DiskFs>(&core_, LevelRef{child, kHeadView}, key, rec.lineage_index);
  fs->RestoreEpochs(rec.cur_epoch, {});
  MutexLock lock(&mu_);
  disks_[child.value()] = fs;
  return Status::Ok();
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
    QueuePurge(disk);
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
