// DiskFs::Ops: loading through the levels and the versioned writes (docs/formats.md §5.1-5.3).
#include "engine/fs/disk_fs_ops.h"

#include <cerrno>

#include "base/coding.h"

namespace archil::engine {
namespace {

const std::string kDeadValue(1, '\x01');  // a deadlist value is its fmt byte

}  // namespace

DiskFs::Ops::Ops(DiskFs* fs) : fs_(fs), c_(fs->core_), disk_(fs->disk_) {
  const EpochTable::Now now = fs->epochs_.Current();
  epoch_ = now.open;
  any_pinned_ = now.any_pinned;
}

Result<DiskFs::Inode> DiskFs::Ops::LoadInode(KvReader& r, Ino ino) {
  ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> v, levels().Get(r, InodeLevelKey(ino)));
  if (!v) return Status::Errno(ENOENT, "no inode " + std::to_string(ino.value()));
  ARCHIL_ASSIGN_OR_RETURN(Versioned<InodeRecord> d, DecodeInode(*v));
  // An inode without a name is visible only to the head that holds it open (invariant 8).
  if (d.body.nlink == 0 && !levels().top().head()) {
    return Status::Errno(ENOENT, "no inode " + std::to_string(ino.value()));
  }
  return Inode{ino, std::move(d.body)};
}

Result<DiskFs::Inode> DiskFs::Ops::LoadDir(KvReader& r, Ino ino) {
  ARCHIL_ASSIGN_OR_RETURN(Inode n, LoadInode(r, ino));
  if (!S_ISDIR(n.rec.mode)) return Status::Errno(ENOTDIR, "not a directory");
  return n;
}

Result<std::optional<DentryRecord>> DiskFs::Ops::LoadDentry(KvReader& r, Ino parent,
                                                            std::string_view name) {
  ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> v, levels().Get(r, DentryOf(parent, name)));
  if (!v) return std::optional<DentryRecord>();
  ARCHIL_ASSIGN_OR_RETURN(Versioned<DentryRecord> d, DecodeDentry(*v));
  return std::optional<DentryRecord>(d.body);
}

Result<std::unique_ptr<LevelScan>> DiskFs::Ops::Scan(KvReader& r, Cf which, HistTag tag,
                                                     Ino owner) {
  ARCHIL_ASSIGN_OR_RETURN(std::vector<LevelRef> chain, levels().Chain(r, owner));
  return std::make_unique<LevelScan>(r, c_->cfs, chain, which, tag, Ino8(owner));
}

Result<bool> DiskFs::Ops::DirIsEmpty(KvReader& r, Ino dir) {
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<LevelScan> scan,
                          Scan(r, Cf::kDentry, HistTag::kDentry, dir));
  scan->Seek(Ino8(dir));
  bool empty = !scan->Valid();
  ARCHIL_RETURN_IF_ERROR(scan->status().WithContext("scan directory"));
  return empty;
}

Status DiskFs::Ops::MarkOrigin(Txn& t, Ino ino) {
  if (!Inherited(ino)) return Status::Ok();
  {
    MutexLock lock(&fs_->origins_mu_);
    if (fs_->origins_.count(ino.value())) return Status::Ok();
  }
  const std::string key = MetaInoKey(disk_, MetaType::kOrigin, ino);
  Result<std::string> have = t.Get(cf(Cf::kMeta), key);
  if (!have.ok() && have.status().code() != Status::Code::kNotFound) return have.status();
  if (!have.ok()) {
    ARCHIL_ASSIGN_OR_RETURN(std::optional<LevelRef> below, levels().WalkBelow(t, disk_, ino));
    if (!below) {
      return Status::Corruption("inode " + std::to_string(ino.value()) +
                                " is inherited but no level below holds it");
    }
    t.Put(cf(Cf::kMeta), key, EncodeOrigin({below->disk, below->epoch}));
  }
  DiskFs* fs = fs_;
  t.OnApply([fs, ino] {
    MutexLock lock(&fs->origins_mu_);
    fs->origins_.insert(ino.value());
  });
  return Status::Ok();
}

Result<bool> DiskFs::Ops::Supersede(Txn& t, const LevelKey& k) {
  if (!any_pinned_) return true;  // nobody can read an old version: nothing to keep
  Result<std::string> old = t.Get(cf(k.cf), HeadKeyAt(disk_, k));
  if (!old.ok()) {
    if (old.status().code() == Status::Code::kNotFound) return false;
    return old.status();
  }
  std::string_view body;
  ARCHIL_ASSIGN_OR_RETURN(Envelope env,
                          DecodeEnvelope(CfNames()[static_cast<size_t>(k.cf)], *old, &body));
  if (env.birth < epoch_ && fs_->epochs_.PinnedIn(env.birth, Epoch(epoch_.value() - 1))) {
    const std::string suffix = HistSuffixOf(k);
    t.Put(cf(Cf::kHist), HistKey(disk_, k.tag, suffix, epoch_), *old);
    t.Put(cf(Cf::kDead), DeadItemKey(disk_, epoch_, env.birth, DeadKind::kHist, k.tag, suffix),
          kDeadValue);
  }
  return true;
}

Status DiskFs::Ops::Store(Txn& t, const LevelKey& k, std::string_view value) {
  ARCHIL_RETURN_IF_ERROR(MarkOrigin(t, k.owner));
  ARCHIL_RETURN_IF_ERROR(Supersede(t, k).status());
  t.Put(cf(k.cf), HeadKeyAt(disk_, k), value);
  return Status::Ok();
}

Status DiskFs::Ops::Erase(Txn& t, const LevelKey& k) {
  ARCHIL_RETURN_IF_ERROR(MarkOrigin(t, k.owner));
  bool below = false;
  if (Inherited(k.owner)) {
    ARCHIL_ASSIGN_OR_RETURN(below, levels().BelowHas(t, k));
  }
  ARCHIL_RETURN_IF_ERROR(Supersede(t, k).status());
  if (below) {
    t.Put(cf(k.cf), HeadKeyAt(disk_, k), EncodeWhiteout(epoch_));
  } else {
    t.Delete(cf(k.cf), HeadKeyAt(disk_, k));
  }
  return Status::Ok();
}

Status DiskFs::Ops::Drop(Txn& t, const LevelKey& k) {
  ARCHIL_RETURN_IF_ERROR(Supersede(t, k).status());
  t.Delete(cf(k.cf), HeadKeyAt(disk_, k));
  return Status::Ok();
}

Status DiskFs::Ops::Release(Txn& t, Epoch birth, const Extent& piece) {
  if (piece.seg_disk != disk_) return Status::Ok();  // the fork pin keeps it (invariant 7)
  if (any_pinned_ && birth < epoch_ && fs_->epochs_.PinnedIn(birth, Epoch(epoch_.value() - 1))) {
    t.Put(cf(Cf::kDead),
          DeadDataKey(disk_, epoch_, birth,
                      {piece.seg_disk, piece.seg_no, piece.seg_blk, piece.nblk}),
          kDeadValue);
    return Status::Ok();
  }
  return fs_->FreeBlocks(t, {piece.seg_disk, piece.seg_no, piece.seg_blk, piece.nblk});
}

Status DiskFs::Ops::DeletePrefix(Txn& t, Cf which, const std::string& prefix) {
  auto it = t.NewIterator(cf(which));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    t.Delete(cf(which), it->key().ToStringView());
  }
  return FromRocks(it->status(), "scan for delete");
}

Status DiskFs::Ops::PurgeInode(Txn& t, Ino ino) {
  // This disk's own xattr and chunk keys go (their data released); what lower levels hold of
  // the inode stays theirs, hidden by the inode's WHITEOUT. Inode numbers are never reused, so
  // nothing can reach those keys through the head again.
  std::vector<std::string> xattrs;
  std::vector<std::pair<std::string, std::string>> chunks;
  {
    const std::string prefix = XattrPrefix(disk_, ino);
    auto it = t.NewIterator(cf(Cf::kXattr));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      xattrs.emplace_back(it->key().ToStringView().substr(8));
    }
    ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan xattrs"));
  }
  {
    const std::string prefix = ChunkPrefix(disk_, ino);
    auto it = t.NewIterator(cf(Cf::kChunk));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      chunks.emplace_back(it->key().ToStringView().substr(8), it->value().ToString());
    }
    ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan chunks"));
  }
  for (std::string& rel : xattrs) {
    ARCHIL_RETURN_IF_ERROR(Drop(t, LevelKey{Cf::kXattr, HistTag::kXattr, ino, std::move(rel)}));
  }
  for (auto& [rel, value] : chunks) {
    ARCHIL_ASSIGN_OR_RETURN(Versioned<ChunkRecord> c, DecodeChunk(value));
    for (const Extent& e : c.body.extents) ARCHIL_RETURN_IF_ERROR(Release(t, e.birth, e));
    ARCHIL_RETURN_IF_ERROR(Drop(t, LevelKey{Cf::kChunk, HistTag::kChunk, ino, std::move(rel)}));
  }
  ARCHIL_RETURN_IF_ERROR(Erase(t, InodeLevelKey(ino)));
  t.Delete(cf(Cf::kMeta), MetaInoKey(disk_, MetaType::kOrphan, ino));
  return Status::Ok();
}

Status DiskFs::Ops::DropLink(Txn& t, Inode& n, bool whole_dir, bool* purged,
                             std::optional<int64_t> ctime_ns) {
  n.rec.nlink = whole_dir ? 0 : n.rec.nlink - 1;
  n.rec.ctime = ctime_ns.value_or(NowNs());
  if (n.rec.nlink > 0) return PutInode(t, n);
  std::vector<uint64_t> holders = fs_->holders_.Of(n.ino);
  if (holders.empty()) {
    if (purged != nullptr) *purged = true;
    return PurgeInode(t, n.ino);
  }
  ARCHIL_RETURN_IF_ERROR(PutInode(t, n));
  OrphanRecord orphan;
  orphan.orphan_epoch = epoch_;
  orphan.since = NowNs();
  for (uint64_t h : holders) {
    Bytes16 id{};
    for (int i = 0; i < 8; ++i) id[i] = static_cast<uint8_t>(h >> (8 * (7 - i)));
    orphan.holders.push_back(id);
  }
  t.Put(cf(Cf::kMeta), MetaInoKey(disk_, MetaType::kOrphan, n.ino), EncodeOrphan(orphan));
  return Status::Ok();
}

Result<CountersRecord> DiskFs::Ops::LoadCounters(Txn& t) {
  ARCHIL_ASSIGN_OR_RETURN(std::string v, t.Get(cf(Cf::kMeta), MetaKey(disk_, MetaType::kCounters)));
  return DecodeCounters(v);
}

Result<Ino> DiskFs::Ops::AllocIno(Txn& t) {
  ARCHIL_ASSIGN_OR_RETURN(CountersRecord c, LoadCounters(t));
  if (c.next_ino > kInoCounterMask) return Status::Errno(ENOSPC, "inode numbers exhausted");
  Ino ino = MakeIno(fs_->lineage_index_, c.next_ino++);
  PutCounters(t, c);
  return ino;
}

DiskFs::Inode DiskFs::Ops::NewInode(Ino ino, uint32_t mode, posix::Owner owner) {
  Inode n{ino, {}};
  n.rec.mode = mode;
  n.rec.uid = owner.uid;
  n.rec.gid = owner.gid;
  n.rec.nlink = 1;
  n.rec.atime = n.rec.mtime = n.rec.ctime = n.rec.btime = NowNs();
  return n;
}

Result<ChunkRecord> DiskFs::Ops::LoadChunk(KvReader& r, Ino ino, uint64_t index) {
  ARCHIL_ASSIGN_OR_RETURN(std::optional<std::string> v, levels().Get(r, ChunkLevelKey(ino, index)));
  if (!v) return ChunkRecord{};
  ARCHIL_ASSIGN_OR_RETURN(Versioned<ChunkRecord> d, DecodeChunk(*v));
  return std::move(d.body);
}

Status DiskFs::Ops::PutChunk(Txn& t, Ino ino, uint64_t index, const ChunkRecord& c) {
  LevelKey k = ChunkLevelKey(ino, index);
  if (c.extents.empty()) return Erase(t, k);
  return Store(t, k, EncodeChunk({ValueKind::kValue, 0, epoch_}, c));
}

}  // namespace archil::engine
