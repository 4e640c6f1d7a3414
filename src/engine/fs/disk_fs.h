// DiskFs: one disk's file system on the engine (posix::FileSystem over RocksDB and segments).
//
// Every mutation is one CommitQueue prepare: it reads what it needs through its Txn, writes the
// new inode, dentry, xattr and chunk values, and returns; the group's one synced Write makes it
// durable. File data goes to the disk's open segment: a write of at most 64 KiB also rides in the
// batch as an intent (so it costs no segment fdatasync), a larger one is fdatasynced in its
// segment before the batch is written (docs/formats.md invariant 2). Reads run on the caller's
// thread against a snapshot, never through the queue.
//
// Unlinked-but-open inodes: Open/Release keep an in-memory holder table (HolderTable); the last
// unlink of an inode with holders writes an ORPHAN record naming them, so the inode survives a
// restart until its holders release it (or the session layer drops them).
//
// Checkpoints (docs/formats.md §4.1 EPOCH/CKPT, §5): a checkpoint freezes the open epoch in one
// commit (O(1)); later changes keep the versions a checkpoint can see in history, and deleting it
// frees, through the deadlists, exactly what only it kept. A DiskFs made for a frozen epoch is a
// read-only view of that checkpoint (every mutation fails with EROFS); so is a DiskFs made with a
// pinned RocksDB snapshot of the head (Engine::OpenSnapshot).
//
// Parts, each with its own contract, lock and unit tests: HolderTable (who holds which inode
// open), EpochTable (the open epoch and the frozen ones: what a versioned write must keep),
// OpenSegment (the cursor of the segment new data goes to). DiskFs keeps them equal to what its
// commits write: it changes a part inside the commit and puts it back if the commit fails.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/siphash.h"
#include "engine/commit/commit_hooks.h"
#include "engine/commit/commit_queue.h"
#include "engine/fs/epoch_table.h"
#include "engine/fs/holder_table.h"
#include "engine/fs/open_segment.h"
#include "engine/lineage/levels.h"
#include "engine/lineage/lineage.h"
#include "engine/records/column_families.h"
#include "engine/records/fs_records.h"
#include "engine/records/keys.h"
#include "engine/records/meta_records.h"
#include "engine/space/segment_files.h"
#include "engine/space/space_guard.h"
#include "engine/types.h"
#include "posix/file_system.h"

namespace archil::engine {

// What every disk shares: the database, the queue, the segment files.
struct EngineCore {
  rocksdb::DB* db = nullptr;
  Cfs cfs;
  CommitQueue* queue = nullptr;
  SegmentFiles* segments = nullptr;
  Lineages* lineages = nullptr;
  SpaceGuard* space = nullptr;
  const Clock* clock = nullptr;
  uint32_t segment_blocks = 16384;  // data blocks per segment (block 0 is the header)
  // With a tier: a sealed segment is deleted only once uploaded (MarkUploaded), even when
  // nothing in it is live. Without one, sealed counts as uploaded.
  bool keep_until_uploaded = false;
  // The owner generation new segments are numbered under (MakeSegNo); null: 1.
  const std::atomic<uint32_t>* owner_gen = nullptr;
  // EngineOptions::on_sealed.
  std::function<void()> on_sealed;
};

// Writes of at most this many bytes ride in the commit batch as intents.
inline constexpr size_t kIntentMaxBytes = 64 * 1024;

class DiskFs final : public posix::FileSystem {
 public:
  // `view`: the disk's head (epoch kHeadView) or one of its checkpoints' epochs (read-only).
  // REQUIRES: the disk's DISK record exists; `core` outlives this; core->lineages knows the disk.
  // With `pinned` (a RocksDB snapshot of the head; the view releases it when it goes), a
  // read-only view of the head as it was then: every read of it sees that one moment.
  DiskFs(EngineCore* core, LevelRef view, const SipHashKey& dir_hash_key, uint32_t lineage_index,
         std::shared_ptr<const rocksdb::Snapshot> pinned = nullptr);

  DiskNo disk() const { return disk_; }
  bool read_only() const { return !view_.head() || pinned_ != nullptr; }
  const SipHashKey& dir_hash_key() const { return dir_hash_key_; }
  uint32_t lineage_index() const { return lineage_index_; }

  Result<posix::Attr> Lookup(posix::Ino parent, std::string_view name) override;
  Result<posix::Attr> GetAttr(posix::Ino ino) override;
  Result<posix::Attr> SetAttr(posix::Ino ino, const posix::SetAttrRequest& request) override;
  Result<posix::Attr> Mknod(posix::Ino parent, std::string_view name, uint32_t mode, uint32_t rdev,
                            posix::Owner owner) override;
  Result<posix::Attr> Mkdir(posix::Ino parent, std::string_view name, uint32_t mode,
                            posix::Owner owner) override;
  Result<posix::Attr> Symlink(posix::Ino parent, std::string_view name, std::string_view target,
                              posix::Owner owner) override;
  Result<posix::Attr> Link(posix::Ino ino, posix::Ino new_parent,
                           std::string_view new_name) override;
  Status Unlink(posix::Ino parent, std::string_view name) override;
  Status Rmdir(posix::Ino parent, std::string_view name) override;
  Status Rename(posix::Ino parent, std::string_view name, posix::Ino new_parent,
                std::string_view new_name, uint32_t flags) override;
  Result<std::string> Readlink(posix::Ino ino) override;
  Result<posix::DirPage> ReadDir(posix::Ino dir, uint64_t after_cookie,
                                 size_t max_entries) override;
  Result<std::string> GetXattr(posix::Ino ino, std::string_view name) override;
  Status SetXattr(posix::Ino ino, std::string_view name, std::string_view value,
                  uint32_t flags) override;
  Result<std::vector<std::string>> ListXattr(posix::Ino ino) override;
  Status RemoveXattr(posix::Ino ino, std::string_view name) override;
  Result<std::string> Read(posix::Ino ino, uint64_t offset, size_t length) override;
  Result<posix::Attr> Write(posix::Ino ino, uint64_t offset, std::string_view data) override;
  Status Fallocate(posix::Ino ino, uint32_t mode, uint64_t offset, uint64_t length) override;
  Result<posix::StatFs> Statfs() override;
  Status Open(posix::Ino ino, posix::HolderId holder) override;
  Status Release(posix::Ino ino, posix::HolderId holder) override;
  Status DropHolder(posix::HolderId holder) override;

  // The mutations above with `hooks` attached to their commit (engine/commit/commit_hooks.h): the
  // disk server's way to write a reply's slot record in the operation's own batch.
  Result<posix::Attr> SetAttr(posix::Ino ino, const posix::SetAttrRequest& request,
                              const CommitHooks& hooks);
  Result<posix::Attr> Mknod(posix::Ino parent, std::string_view name, uint32_t mode, uint32_t rdev,
                            posix::Owner owner, const CommitHooks& hooks);
  Result<posix::Attr> Mkdir(posix::Ino parent, std::string_view name, uint32_t mode,
                            posix::Owner owner, const CommitHooks& hooks);
  Result<posix::Attr> Symlink(posix::Ino parent, std::string_view name, std::string_view target,
                              posix::Owner owner, const CommitHooks& hooks);
  Result<posix::Attr> Link(posix::Ino ino, posix::Ino new_parent, std::string_view new_name,
                           const CommitHooks& hooks);
  Status Unlink(posix::Ino parent, std::string_view name, const CommitHooks& hooks);
  Status Rmdir(posix::Ino parent, std::string_view name, const CommitHooks& hooks);
  Status Rename(posix::Ino parent, std::string_view name, posix::Ino new_parent,
                std::string_view new_name, uint32_t flags, const CommitHooks& hooks);
  Status SetXattr(posix::Ino ino, std::string_view name, std::string_view value, uint32_t flags,
                  const CommitHooks& hooks);
  Status RemoveXattr(posix::Ino ino, std::string_view name, const CommitHooks& hooks);
  Result<posix::Attr> Write(posix::Ino ino, uint64_t offset, std::string_view data,
                            const CommitHooks& hooks);
  Status Fallocate(posix::Ino ino, uint32_t mode, uint64_t offset, uint64_t length,
                   const CommitHooks& hooks);
  // Grants `count` (1..kMaxInoGrant) inode numbers to session `session` for the creates it
  // answers itself (ADR 0025): they become its current range, the current one its previous
  // (formats.md §4.12, rtype 0x05); numbers of older ranges can no longer be used. Returns the
  // first. Errors: EINVAL for a count out of range, EROFS on a view, ENOSPC when the disk's
  // inode numbers run out.
  Result<posix::Ino> GrantInos(const SessionIdBytes& session, uint32_t count,
                               const CommitHooks& hooks);
  static constexpr uint32_t kMaxInoGrant = 1 << 16;

  // Applies what a client answered itself (posix::Puts, docs/protocol.md §5.3.2) in one commit:
  // its creates in order, then its writes in order, then its attribute puts in order (their
  // times are what the writes showed), then its removes in order (each an unlink of the only
  // name of a non-directory or of an empty directory, its time the parent's mtime and ctime). A
  // create of a directory leaves what Mkdir leaves (two links, its parent one more). A create needs
  // `session`, whose grant must hold its number unused (the number is then used: a granted number
  // names one inode, ever); a create whose name already names its number changes nothing (a retried
  // request). A put of an inode that does not exist, or a remove of a name that does not, is
  // skipped (nothing is left to do) and counted in *skipped. Applying the same puts again leaves
  // the same names, bytes and attributes. Errors, and then nothing is applied: ENOSPC past the
  // reserve (creates and writes), EFBIG; EINVAL for a create without a session, of a number not
  // granted or used, of a type other than a file, FIFO, socket, device or directory (with no rdev),
  // a bad name, or a write to a non-file; EEXIST for a create of a name taken; ENOENT or ENOTDIR
  // for a create or remove in a parent gone or not a directory; ENOTEMPTY for a remove of a
  // directory not empty (one that is empty goes as Rmdir removes it), EINVAL for one whose name
  // names another inode or a non-directory with other names.
  Status ApplyPuts(const posix::Puts& puts, const CommitHooks& hooks, size_t* skipped = nullptr,
                   const SessionIdBytes* session = nullptr);

  // Makes every mutation committed so far durable, of this disk and of every other disk of the
  // engine (they share one write-ahead log): what a mutation committed with `sync` false waits
  // for (commit_hooks.h). Returns the commit queue's error if it is broken.
  Status Sync() override;

  // ---- checkpoints (head views only) ----
  // Freezes the open epoch as checkpoint `name` in one commit. AlreadyExists if the name is
  // taken; InvalidArgument unless it is 1..100 of [A-Za-z0-9._-].
  Result<Epoch> Checkpoint(std::string_view name, const CommitHooks& hooks = {});
  // NotFound if no such checkpoint.
  Result<Epoch> CheckpointEpoch(std::string_view name);
  std::vector<CheckpointInfo> Checkpoints();  // oldest first
  // Deletes a checkpoint and frees what only it kept (at once unless a branch was made from it:
  // then when the last such branch goes). NotFound if no such checkpoint. REQUIRES: no view of
  // it is in use.
  Status DeleteCheckpoint(std::string_view name);
  // Inside a branch's create (+1) or delete (-1) commit: counts the branch's pin on epoch `e`.
  Status AddBranchPin(Txn& t, Epoch e, int delta);
  // Frees what every released, no longer pinned epoch kept (after a branch delete, at open).
  Status CollectReleased();

  // ---- accounting ----
  // Data bytes this disk's own segments hold live: what its head and its checkpoints reference
  // and it wrote (a branch's figure is what it adds to its parent: billed for what a fork adds).
  Result<uint64_t> StoredBytes();
  // Data bytes that deleting checkpoint `name` would free now: what no other checkpoint, branch or
  // the head references. NotFound if no such checkpoint.
  Result<uint64_t> CheckpointUniqueBytes(std::string_view name);

  // Engine internals.
  // The tier has stored sealed segment `seg` (as a link to its file when `stored_by_link`): it
  // may be deleted once nothing in it is live.
  Status MarkUploaded(SegNo seg, bool stored_by_link);
  // Seals the open segment if its first block was written `age_ns` or more ago, so that a disk
  // that writes little still hands its data to the tier (docs/tiering.md §7). The next write
  // opens a new segment.
  Status SealIfOlderThan(int64_t age_ns);
  // At open: seals the segments the last run left open, removes segment files no record names,
  // deletes sealed segments with nothing live.
  Status SweepSegments();
  // The disk's open epoch and its EPOCH records, read at open.
  void RestoreEpochs(Epoch cur, std::map<uint64_t, EpochRecord> epochs);
  // Records the holders of an ORPHAN found at start.
  void RestoreOrphan(Ino ino, const std::vector<uint64_t>& holders);
  // The open segment, the first block not yet completely written to it, and the cursor's
  // generation, for the intent syncer: after a Sync of the segment that starts later, every
  // intent below the mark may go, if the generation is still the same then (blocks below the
  // mark were not handed out again). nullopt if no segment is open.
  using SegmentMark = OpenSegment::Mark;
  std::optional<SegmentMark> OpenSegmentMark();
  // Syncs the open segment and deletes the intents it made redundant (the syncer's step).
  Status TruncateIntents();
  // Closes the open segment if nothing in it is live (a full disk's last resort: its blocks go
  // back to the file system at once, or with a tier once it is uploaded). Reports whether it
  // did.
  Result<bool> RetireDeadOpenSegment();

 private:
  struct Inode;  // a loaded inode with its key
  class Ops;     // the body of every operation (disk_fs_ops.cc, disk_fs_data.cc)
  friend class Ops;
  Result<posix::Attr> CreateNode(Ino parent, std::string_view name, uint32_t mode,
                                 posix::Owner owner, const CommitHooks& hooks,
                                 const std::function<void(Inode&)>& fill);
  Result<std::pair<Inode, Inode>> LoadEntry(Txn& t, Ino parent, std::string_view name);
  // Removes an inode that has neither a name nor a holder (its last Release, its holder's end).
  Status PurgeIfUnreferenced(Ino ino);
  // What `ino`'s xattrs take (posix::kXattrNamesMax, kXattrValuesMax count it).
  Result<posix::XattrTotals> XattrTotalsOf(Ops& ops, KvReader& r, Ino ino);
  Status Writable() const;
  // What a read reads through: a fresh snapshot, or the pinned one.
  DbView ReadView() const { return pinned_ ? DbView(core_->db, pinned_.get()) : DbView(core_->db); }
  // The one commit of a public mutation: `prepare`, then in the same batch (only if it
  // succeeded) the caller's epilogue; the caller's on_queued once it is queued. A change of names
  // fills `touched` in its prepare, for the epilogue (CommitResult::touched).
  Status Mutate(const CommitHooks& hooks, const std::function<Status(Txn&)>& prepare) {
    return Mutate(hooks, nullptr, prepare);
  }
  Status Mutate(const CommitHooks& hooks, const Touched* touched,
                const std::function<Status(Txn&)>& prepare);
  Result<posix::Attr> MutateAttr(const CommitHooks& hooks,
                                 const std::function<Result<posix::Attr>(Txn&)>& prepare) {
    return MutateAttr(hooks, nullptr, prepare);
  }
  Result<posix::Attr> MutateAttr(const CommitHooks& hooks, const Touched* touched,
                                 const std::function<Result<posix::Attr>(Txn&)>& prepare);
  // Writable, and `bytes` more fit above the space reserve (ENOSPC otherwise).
  Status Admit(uint64_t bytes) const;
  // Marks blocks of this disk's segment live (a commit points an extent at them).
  Status MarkLive(Txn& t, SegNo seg, uint32_t blk, uint32_t nblk);
  // Returns blocks of this disk's segments to free space.
  Status FreeBlocks(Txn& t, const DeadBlocks& blocks);
  // Deletes sealed segment `seg` (after this batch) if nothing in it is live and, with a tier,
  // it is uploaded. The open segment is retired the same way (RetireOpen) once nothing in it is
  // live and at least an eighth of it was handed out, or at any size with `any_size`.
  Status MaybeKill(Txn& t, SegNo seg, bool any_size = false);
  // Closes the open segment `seg` whose blocks are all dead: without a tier its records and
  // intents go with this batch and its file after it; with one it is sealed, to die once
  // uploaded. The next write opens a new segment.
  Status RetireOpen(Txn& t, SegNo seg, const SegRecord& rec);
  // Called before a prepare changes the open segment's cursor: if the prepare's writes never
  // reach the database (it fails, or its group's Write does), the cursor goes back to what it
  // is now, and its generation moves on (blocks may then be handed out again).
  void KeepSegmentCursor(Txn& t);
  // Epoch `e`'s record becomes `r` in the epoch table, and goes back if this commit fails.
  void SetEpoch(Txn& t, Epoch e, const EpochRecord& r);
  // §5.5: the deadlist entries dead[d, b] with d in (k, next] and b in (prev, k]: their lifetime
  // [b, d-1] holds k and no other pinned epoch, so k alone keeps them. At most `limit`.
  Result<std::vector<std::string>> KeptOnlyBy(KvReader& r, Epoch k, EpochTable::Neighbours n,
                                              size_t limit);
  // Frees the deadlist entries that released epoch `k` alone kept, in bounded batches.
  Status CollectEpoch(Epoch k);

  EngineCore* const core_;
  const DiskNo disk_;
  const LevelRef view_;
  const SipHashKey dir_hash_key_;
  const uint32_t lineage_index_;
  const Levels levels_;
  const std::shared_ptr<const rocksdb::Snapshot> pinned_;

  // The disk's parts, each with its own contract and lock (none is taken while another is held).
  HolderTable holders_;   // who has which inode open
  EpochTable epochs_;     // the open epoch and the frozen ones
  OpenSegment open_seg_;  // where new data goes

  Mutex origins_mu_;
  // Inherited inodes whose ORIGIN record is committed.
  std::set<uint64_t> origins_ ARCHIL_GUARDED_BY(origins_mu_);
};

}  // namespace archil::engine
