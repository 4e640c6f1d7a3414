// The shared body of DiskFs's operations: loading and storing records through a Txn or a DbView,
// inode-number allocation, block I/O through the chunk maps. Internal to disk_fs*.cc.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/chunk_record.h"
#include "engine/cookie.h"
#include "engine/disk_fs.h"
#include "engine/keys.h"
#include "engine/meta_records.h"

namespace archil::engine {

// Every head value is born in this epoch until checkpoints bump it (docs/formats.md §5).
inline constexpr Epoch kHeadEpoch{1};

struct DiskFs::Inode {
  Ino ino;
  InodeRecord rec;
};

class DiskFs::Ops {
 public:
  explicit Ops(DiskFs* fs) : fs_(fs), c_(fs->core_), disk_(fs->disk_) {}

  int64_t NowNs() const { return c_->clock->NowMicros() * 1000; }
  DiskNo disk() const { return disk_; }
  rocksdb::ColumnFamilyHandle* cf(Cf which) const { return c_->cfs[which]; }

  // ---- records (R is Txn or DbView) ----
  template <typename R>
  Result<Inode> LoadInode(R& r, Ino ino) {
    Result<std::string> v = r.Get(cf(Cf::kInode), InodeKey(disk_, ino));
    if (!v.ok()) {
      if (v.status().code() == Status::Code::kNotFound) {
        return Status::Errno(ENOENT, "no inode " + std::to_string(ino.value()));
      }
      return v.status();
    }
    ARCHIL_ASSIGN_OR_RETURN(Versioned<InodeRecord> d, DecodeInode(*v));
    if (d.env.kind == ValueKind::kWhiteout) {
      return Status::Errno(ENOENT, "no inode " + std::to_string(ino.value()));
    }
    return Inode{ino, std::move(d.body)};
  }
  template <typename R>
  Result<Inode> LoadDir(R& r, Ino ino) {
    ARCHIL_ASSIGN_OR_RETURN(Inode n, LoadInode(r, ino));
    if (!S_ISDIR(n.rec.mode)) return Status::Errno(ENOTDIR, "not a directory");
    return n;
  }
  std::string DentryKeyOf(Ino parent, std::string_view name) const {
    return DentryKey(disk_, parent, DentryCookie(fs_->dir_hash_key_, name), name);
  }
  // The entry `name` of `parent`, or nullopt.
  template <typename R>
  Result<std::optional<DentryRecord>> LoadDentry(R& r, Ino parent, std::string_view name) {
    Result<std::string> v = r.Get(cf(Cf::kDentry), DentryKeyOf(parent, name));
    if (!v.ok()) {
      if (v.status().code() == Status::Code::kNotFound) return std::optional<DentryRecord>();
      return v.status();
    }
    ARCHIL_ASSIGN_OR_RETURN(Versioned<DentryRecord> d, DecodeDentry(*v));
    if (d.env.kind == ValueKind::kWhiteout) return std::optional<DentryRecord>();
    return std::optional<DentryRecord>(d.body);
  }
  template <typename R>
  Result<bool> DirIsEmpty(R& r, Ino dir) {
    std::string prefix = DentryPrefix(disk_, dir);
    auto it = r.NewIterator(cf(Cf::kDentry));
    it->Seek(prefix);
    bool empty = !(it->Valid() && it->key().starts_with(prefix));
    ARCHIL_RETURN_IF_ERROR(FromRocks(it->status(), "scan directory"));
    return empty;
  }

  void PutInode(Txn& t, Inode& n) {
    n.rec.change++;
    t.Put(cf(Cf::kInode), InodeKey(disk_, n.ino),
          EncodeInode({ValueKind::kValue, 0, kHeadEpoch}, n.rec));
  }
  void PutDentry(Txn& t, Ino parent, std::string_view name, Ino ino, uint32_t mode) {
    t.Put(cf(Cf::kDentry), DentryKeyOf(parent, name),
          EncodeDentry({ValueKind::kValue, 0, kHeadEpoch},
                       {ino, static_cast<uint8_t>((mode & S_IFMT) >> 12)}));
  }
  void DeleteDentry(Txn& t, Ino parent, std::string_view name) {
    t.Delete(cf(Cf::kDentry), DentryKeyOf(parent, name));
  }
  // Deletes every key of `prefix` in `which` (seen through the Txn).
  Status DeletePrefix(Txn& t, Cf which, const std::string& prefix) {
    auto it = t.NewIterator(cf(which));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      t.Delete(cf(which), it->key().ToStringView());
    }
    return FromRocks(it->status(), "scan for delete");
  }
  // Removes an inode and everything that hangs off it (xattrs, chunks, truncate records).
  Status PurgeInode(Txn& t, Ino ino) {
    ARCHIL_RETURN_IF_ERROR(DeletePrefix(t, Cf::kInode, InodeKey(disk_, ino)));
    ARCHIL_RETURN_IF_ERROR(DeletePrefix(t, Cf::kXattr, XattrPrefix(disk_, ino)));
    ARCHIL_RETURN_IF_ERROR(DeletePrefix(t, Cf::kChunk, ChunkPrefix(disk_, ino)));
    t.Delete(cf(Cf::kMeta), MetaInoKey(disk_, MetaType::kOrphan, ino));
    return Status::Ok();
  }

  // Drops one name of `n` (already removed from its directory; `whole_dir`: it was a directory,
  // whose every link goes with its name). The inode goes with its last name unless it is open:
  // then it becomes an orphan (ORPHAN record naming its holders) until its last Release.
  Status DropLink(Txn& t, Inode& n, bool whole_dir) {
    n.rec.nlink = whole_dir ? 0 : n.rec.nlink - 1;
    n.rec.ctime = NowNs();
    if (n.rec.nlink > 0) {
      PutInode(t, n);
      return Status::Ok();
    }
    std::vector<uint64_t> holders = fs_->HoldersOf(n.ino);
    if (holders.empty()) return PurgeInode(t, n.ino);
    PutInode(t, n);
    OrphanRecord orphan;
    orphan.orphan_epoch = kHeadEpoch;
    orphan.since = NowNs();
    for (uint64_t h : holders) {
      Bytes16 id{};
      for (int i = 0; i < 8; ++i) id[i] = static_cast<uint8_t>(h >> (8 * (7 - i)));
      orphan.holders.push_back(id);
    }
    t.Put(cf(Cf::kMeta), MetaInoKey(disk_, MetaType::kOrphan, n.ino), EncodeOrphan(orphan));
    return Status::Ok();
  }

  Result<CountersRecord> LoadCounters(Txn& t) {
    ARCHIL_ASSIGN_OR_RETURN(std::string v,
                            t.Get(cf(Cf::kMeta), MetaKey(disk_, MetaType::kCounters)));
    return DecodeCounters(v);
  }
  void PutCounters(Txn& t, const CountersRecord& r) {
    t.Put(cf(Cf::kMeta), MetaKey(disk_, MetaType::kCounters), EncodeCounters(r));
  }
  Result<Ino> AllocIno(Txn& t) {
    ARCHIL_ASSIGN_OR_RETURN(CountersRecord c, LoadCounters(t));
    if (c.next_ino > kInoCounterMask) return Status::Errno(ENOSPC, "inode numbers exhausted");
    Ino ino = MakeIno(fs_->lineage_index_, c.next_ino++);
    PutCounters(t, c);
    return ino;
  }

  // A new inode of `mode` owned by `owner`, times now.
  Inode NewInode(Ino ino, uint32_t mode, posix::Owner owner) {
    Inode n{ino, {}};
    n.rec.mode = mode;
    n.rec.uid = owner.uid;
    n.rec.gid = owner.gid;
    n.rec.nlink = 1;
    n.rec.atime = n.rec.mtime = n.rec.ctime = n.rec.btime = NowNs();
    return n;
  }
  void Touch(Inode& n) { n.rec.mtime = n.rec.ctime = NowNs(); }

  // ---- data ----
  // The extent map of chunk `index` (empty if none).
  template <typename R>
  Result<ChunkRecord> LoadChunk(R& r, Ino ino, uint64_t index) {
    Result<std::string> v = r.Get(cf(Cf::kChunk), ChunkKey(disk_, ino, index));
    if (!v.ok()) {
      if (v.status().code() == Status::Code::kNotFound) return ChunkRecord{};
      return v.status();
    }
    ARCHIL_ASSIGN_OR_RETURN(Versioned<ChunkRecord> d, DecodeChunk(*v));
    return std::move(d.body);
  }
  void PutChunk(Txn& t, Ino ino, uint64_t index, const ChunkRecord& c) {
    if (c.extents.empty()) {
      t.Delete(cf(Cf::kChunk), ChunkKey(disk_, ino, index));
    } else {
      t.Put(cf(Cf::kChunk), ChunkKey(disk_, ino, index),
            EncodeChunk({ValueKind::kValue, 0, kHeadEpoch}, c));
    }
  }
  // Reads blocks [first, first + n) of a file (zeros where no extent is), checking every CRC.
  template <typename R>
  Result<std::string> ReadBlocks(R& r, Ino ino, uint64_t first, uint64_t n);

  // Writes whole blocks starting at file block `first` into a fresh place in the open segment and
  // points the chunk maps at it. Returns the number of blocks that held data before.
  Result<uint64_t> WriteBlocks(Txn& t, Ino ino, uint64_t first, std::string_view blocks);
  // Drops blocks [first, first + n) from the chunk maps; returns how many held data.
  Result<uint64_t> DropBlocks(Txn& t, Ino ino, uint64_t first, uint64_t n);
  // Zeros bytes [offset, offset + length) of a file whose size is `size` (whole blocks dropped,
  // edge blocks rewritten); adjusts n.rec.blocks.
  Status ZeroRange(Txn& t, Inode& n, uint64_t offset, uint64_t length);
  // Sets the size, dropping or zeroing what lies beyond it.
  Status Resize(Txn& t, Inode& n, uint64_t size);

 private:
  // Allocates `nblk` contiguous blocks in the open segment (opening or sealing as needed).
  Result<std::pair<SegNo, uint32_t>> Allocate(Txn& t, uint32_t nblk);
  Status OpenNewSegment(Txn& t);

  DiskFs* fs_;
  EngineCore* c_;
  DiskNo disk_;
};

posix::Attr ToAttr(Ino ino, const InodeRecord& r);

}  // namespace archil::engine
