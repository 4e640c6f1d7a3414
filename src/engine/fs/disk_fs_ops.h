// The shared body of DiskFs's operations: loading records through the disk's levels, storing them
// with the versioning rules (docs/formats.md §5.2), inode-number allocation, block I/O through the
// chunk maps. Internal to disk_fs*.cc.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/fs/disk_fs.h"
#include "engine/lineage/levels.h"
#include "engine/records/chunk_record.h"
#include "engine/records/cookie.h"
#include "engine/records/keys.h"
#include "engine/records/meta_records.h"

namespace archil::engine {

// The epoch a new disk's first values are born in (docs/formats.md §1: epochs start at 1).
inline constexpr Epoch kFirstEpoch{1};

struct DiskFs::Inode {
  Ino ino;
  InodeRecord rec;
};

class DiskFs::Ops {
 public:
  explicit Ops(DiskFs* fs);

  int64_t NowNs() const { return c_->clock->NowMicros() * 1000; }
  DiskNo disk() const { return disk_; }
  rocksdb::ColumnFamilyHandle* cf(Cf which) const { return c_->cfs[which]; }
  const Levels& levels() const { return fs_->levels_; }
  // The epoch this operation's writes are born in (the disk's open epoch).
  Epoch epoch() const { return epoch_; }

  // ---- records, read through the view's levels ----
  Result<Inode> LoadInode(KvReader& r, Ino ino);
  Result<Inode> LoadDir(KvReader& r, Ino ino);
  LevelKey DentryOf(Ino parent, std::string_view name) const {
    return DentryLevelKey(parent, DentryCookie(fs_->dir_hash_key_, name), name);
  }
  // The entry `name` of `parent`, or nullopt.
  Result<std::optional<DentryRecord>> LoadDentry(KvReader& r, Ino parent, std::string_view name);
  Result<bool> DirIsEmpty(KvReader& r, Ino dir);
  // A merged scan of `owner`'s keys of one kind through the view's levels.
  Result<std::unique_ptr<LevelScan>> Scan(KvReader& r, Cf which, HistTag tag, Ino owner);

  // ---- versioned writes (formats.md §5.2) ----
  // Makes `value` (enveloped, born in epoch()) the head version of `k`, keeping the version it
  // replaces in history if a pinned epoch can see it.
  Status Store(Txn& t, const LevelKey& k, std::string_view value);
  // Deletes `k` from the view: a WHITEOUT if a lower level still has it, else a delete.
  Status Erase(Txn& t, const LevelKey& k);
  // Deletes this disk's head version of `k` (history kept as Store does), no WHITEOUT.
  Status Drop(Txn& t, const LevelKey& k);
  // Blocks of `piece`, born in `birth`, are no longer referenced by the head: free them now, or
  // put them on the deadlist if a pinned epoch still sees them. Blocks of other disks (inherited
  // through a branch) are never freed here.
  Status Release(Txn& t, Epoch birth, const Extent& piece);

  Status PutInode(Txn& t, Inode& n) {
    n.rec.change++;
    return Store(t, InodeLevelKey(n.ino), EncodeInode({ValueKind::kValue, 0, epoch_}, n.rec));
  }
  Status PutDentry(Txn& t, Ino parent, std::string_view name, Ino ino, uint32_t mode) {
    return Store(t, DentryOf(parent, name),
                 EncodeDentry({ValueKind::kValue, 0, epoch_},
                              {ino, static_cast<uint8_t>((mode & S_IFMT) >> 12)}));
  }
  Status DeleteDentry(Txn& t, Ino parent, std::string_view name) {
    return Erase(t, DentryOf(parent, name));
  }
  // Deletes every key of `prefix` in the unversioned CF `which` (seen through the Txn).
  Status DeletePrefix(Txn& t, Cf which, const std::string& prefix);
  // Removes an inode and everything that hangs off it (xattrs, chunks, its ORPHAN record).
  Status PurgeInode(Txn& t, Ino ino);
  // Drops one name of `n` (already removed from its directory; `whole_dir`: it was a directory,
  // whose every link goes with its name). The inode goes with its last name unless it is open:
  // then it becomes an orphan (ORPHAN record naming its holders) until its last Release.
  // `purged`, if given: set when the inode went with its last name (no holder kept it).
  // `ctime_ns`: the inode's new change time (default: now).
  Status DropLink(Txn& t, Inode& n, bool whole_dir, bool* purged = nullptr,
                  std::optional<int64_t> ctime_ns = std::nullopt);

  Result<CountersRecord> LoadCounters(Txn& t);
  void PutCounters(Txn& t, const CountersRecord& r) {
    t.Put(cf(Cf::kMeta), MetaKey(disk_, MetaType::kCounters), EncodeCounters(r));
  }
  Result<Ino> AllocIno(Txn& t);
  // A new inode of `mode` owned by `owner`, times now.
  Inode NewInode(Ino ino, uint32_t mode, posix::Owner owner);
  void Touch(Inode& n) { n.rec.mtime = n.rec.ctime = NowNs(); }

  // ---- data ----
  // The extent map of chunk `index` (empty if none).
  Result<ChunkRecord> LoadChunk(KvReader& r, Ino ino, uint64_t index);
  Status PutChunk(Txn& t, Ino ino, uint64_t index, const ChunkRecord& c);
  // Reads blocks [first, first + n) of a file (zeros where no extent is), checking every CRC.
  Result<std::string> ReadBlocks(KvReader& r, Ino ino, uint64_t first, uint64_t n);

  // Writes whole blocks starting at file block `first` into a fresh place in the open segment and
  // points the chunk maps at it. Returns the number of blocks that held data before. Up to 64 KiB
  // ride in the batch as intents; a larger write's segment is synced by the group before its
  // Write (Txn::SyncBeforeWrite).
  Result<uint64_t> WriteBlocks(Txn& t, Ino ino, uint64_t first, std::string_view blocks);
  // Drops blocks [first, first + n) from the chunk maps; returns how many held data.
  Result<uint64_t> DropBlocks(Txn& t, Ino ino, uint64_t first, uint64_t n);
  // Seals open segment `seg`, whose record is `rec`: syncs its file, drops its intents, writes
  // SEG(SEALED). The caller stops allocating from it.
  Status Seal(Txn& t, SegNo seg, SegRecord rec);
  // Writes `data` (not empty) at `offset` of regular file `n`, read-modify-write at the block
  // edges; adjusts n.rec (blocks, size, set-ID bits, times). The caller puts the inode.
  Status WriteData(Txn& t, Inode& n, uint64_t offset, std::string_view data);
  // Zeros bytes [offset, offset + length) of a file whose size is `size` (whole blocks dropped,
  // edge blocks rewritten); adjusts n.rec.blocks.
  Status ZeroRange(Txn& t, Inode& n, uint64_t offset, uint64_t length);
  // Sets the size, dropping or zeroing what lies beyond it.
  Status Resize(Txn& t, Inode& n, uint64_t size);

 private:
  bool Inherited(Ino ino) const { return LineageIndexOf(ino) != fs_->lineage_index_; }
  // The first change of an inherited inode writes this disk's ORIGIN record for it (§5.3).
  Status MarkOrigin(Txn& t, Ino ino);
  // Keeps the head version of `k` in history if a pinned epoch can see it. Returns whether the
  // head had a version.
  Result<bool> Supersede(Txn& t, const LevelKey& k);
  // Allocates `nblk` contiguous blocks in the open segment (opening or sealing as needed).
  Result<std::pair<SegNo, uint32_t>> Allocate(Txn& t, uint32_t nblk);
  Status OpenNewSegment(Txn& t);

  DiskFs* fs_;
  EngineCore* c_;
  DiskNo disk_;
  Epoch epoch_;
  bool any_pinned_ = false;
};

posix::Attr ToAttr(Ino ino, const InodeRecord& r);

// A type MKNOD (and a client's create put) may make: a file, FIFO, socket or device.
inline bool MknodType(uint32_t mode) {
  const uint32_t type = mode & S_IFMT;
  return type == S_IFREG || type == S_IFIFO || type == S_IFSOCK || type == S_IFCHR ||
         type == S_IFBLK;
}

}  // namespace archil::engine
