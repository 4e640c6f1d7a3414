// Engine: every disk a server holds, on one RocksDB instance and the disks' segment files
// (docs/formats.md, docs/architecture.md §2-3). No FUSE and no network here; all file I/O goes
// through an io::Env, so crash tests run it on the power-loss simulator.
//
// Layout under `dir`: db/ (RocksDB: metadata, extent maps, intents), segments/<disk>/<seg>
// (file data).
//
// Open: refuses a directory written by a newer format (schema) or one that is not an engine's;
// replays the intents of small writes whose segment data may not have reached the disk; restores
// open-unlinked inodes; finishes deletions of disks and collections of released checkpoints a
// crash interrupted.
//
// Checkpoints and branches (docs/formats.md §5): a checkpoint freezes a disk's open epoch in one
// commit; a branch is a new disk whose head starts empty and reads through to the checkpoint it
// was made from, in one commit, whatever the disk's size. A disk with branches that is deleted
// becomes hidden (not listed, not openable) and goes when its last branch does.
//
// Thread-safety: safe for concurrent use. Disk() views stay valid until the disk is deleted or
// the engine is destroyed.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/listener.h>
#include <rocksdb/sst_file_manager.h>

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "engine/commit/commit_hooks.h"
#include "engine/commit/commit_log.h"
#include "engine/commit/commit_queue.h"
#include "engine/fs/disk_fs.h"
#include "engine/lineage/lineage.h"
#include "engine/records/column_families.h"
#include "engine/records/session_records.h"
#include "engine/served_disks.h"
#include "engine/space/segment_files.h"
#include "engine/tier_source.h"
#include "engine/types.h"
#include "io/env.h"
#include "posix/file_system.h"

namespace archil::engine {

struct EngineOptions {
  io::Env* env = nullptr;           // REQUIRES: outlives the engine
  std::string dir;                  // absolute
  const Clock* clock = nullptr;     // REQUIRES: outlives the engine
  bool sync = true;                 // false only for benchmarks of the engine without the disk
  uint32_t segment_blocks = 16384;  // data blocks per segment: 64 MiB
  int intent_sync_ms = 1000;        // how often open segments are synced and intents dropped,
                                    // and the longest a mutation committed without a sync waits
                                    // for one; 0: never in the background (tests call
                                    // SyncIntents)
  int rocks_max_sleep_micros = -1;  // crash tests: cap RocksDB's retry sleeps (io/rocksdb_fs.h)
  // Crash tests: false keeps RocksDB from compacting on its own threads, so that a seed replays
  // the same file operations (flushes then happen only when FlushColumnFamilies asks).
  bool auto_compactions = true;
  size_t block_cache_mb = 256;
  // A tier ships sealed segments: keep each until SegmentUploaded says it is stored, even when
  // nothing in it is live. Without a tier a sealed segment counts as uploaded.
  bool keep_segments_until_uploaded = false;
  // With a tier: the background syncer (intent_sync_ms) also seals each open segment whose first
  // block is this old, so that what a disk writes reaches the tier within about this long even
  // when it writes far less than a segment (docs/tiering.md §7). 0: only full segments seal.
  int seal_age_ms = 8000;
  // With a tier: every commit also writes one log record per disk it touched into the outbox
  // (engine/commit/commit_log.h), for the log shipper (docs/tiering.md §2).
  bool log_commits = false;
  // With a tier: runs once a segment's seal is durable (full, by age, or retired), on the
  // committing thread, so the tier uploads it at once instead of at its next timed pass. Must
  // not block or call back into the engine.
  std::function<void()> on_sealed;
  // Writes that add data or names fail with ENOSPC once the data directory's file system would
  // have less than this free; deletes never do (engine/space/space_guard.h).
  uint64_t reserve_bytes = uint64_t{256} << 20;
};

struct DiskOptions {
  uint32_t root_mode = 0755;  // permission bits of the root directory
  uint32_t root_uid = 0;
  uint32_t root_gid = 0;
  // false: CreateDisk returns once the disk is written, before the WAL sync; it is durable with
  // the next synced commit (ADR 0010: the catalog's commit is the acknowledgement, and a disk the
  // engine lost in a crash is created again at start).
  bool sync = true;
};

// A branch: its BRANCH record, and whether its disk is hidden (deleted, kept for its branches).
struct BranchInfo {
  DiskNo disk;    // the branch's own disk
  DiskNo parent;  // the disk whose checkpoint it was made from
  std::string name;
  std::string from_checkpoint;
  Epoch fork_epoch;
  int64_t created_ns = 0;
  std::string idempotency_key;  // "" if the request had none
  bool hidden = false;
};

struct BranchRequest {
  DiskNo parent;
  std::string checkpoint;  // a checkpoint of `parent`
  DiskNo child;            // the new disk; REQUIRES: not 0
  std::string name;        // 1-100 of [A-Za-z0-9_-], unique within the lineage
  // Non-empty: a request whose key matches a branch of the lineage returns that branch
  // (created = false) if it asks for the same thing, and AlreadyExists if not. At most 255 bytes.
  std::string idempotency_key;
};

struct BranchCreated {
  BranchInfo branch;
  bool created = false;  // false: an earlier request with the same Idempotency-Key made it
};

// The roles its users see: ServedDisks (the disk server), TierSource (the tier's workers). The
// contracts of the methods marked with a role are in its header.
class Engine final : public ServedDisks, public TierSource {
 public:
  static Result<std::unique_ptr<Engine>> Open(const EngineOptions& options);
  ~Engine();

  // Creates an empty disk (its root directory). AlreadyExists if the disk exists; when it
  // returns, with either, the disk is served (Disk finds it): two creators of one disk, as the API
  // and a first mount can be, never see it half made.
  Status CreateDisk(DiskNo disk, const DiskOptions& options) ARCHIL_EXCLUDES(create_mu_, mu_);
  // Deletes a disk and the data only it references; a disk with branches is hidden until its
  // last branch goes. NotFound if unknown. The disk's FileSystem must no longer be in use.
  // Returns once the deletion is durable (one commit); its space is freed in the background
  // (segment files removed, keys dropped with range deletes: O(its segments), no compaction
  // waited for), and again at the next open if a crash interrupts that.
  Status DeleteDisk(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  // Returns once the space of every disk deleted so far is freed; the first purge error since
  // the last call, if any (that disk is purged again at the next open). For tests and tools.
  Status WaitForPurges() ARCHIL_EXCLUDES(mu_);
  // With a tier (keep_segments_until_uploaded): TierSource's deleted disks.
  std::vector<std::pair<DiskNo, DiskNo>> DeletionsToMark() override ARCHIL_EXCLUDES(mu_);
  Status DeletionMarked(DiskNo disk) override ARCHIL_EXCLUDES(mu_);
  Result<std::vector<std::pair<DiskNo, DiskNo>>> DeletedDisks() override;
  Status ForgetDeletedDisk(DiskNo disk) override;
  Result<DiskFs*> Disk(DiskNo disk) override ARCHIL_EXCLUDES(mu_);         // ServedDisks
  std::vector<DiskNo> ListDisks() override ARCHIL_EXCLUDES(mu_);           // ServedDisks
  std::vector<DiskNo> ListDisksAndHidden() override ARCHIL_EXCLUDES(mu_);  // TierSource

  // Takes checkpoint `name` of a disk: every mutation that returned before the call is in it,
  // none that starts after. O(1). AlreadyExists if the name is taken in this disk.
  Result<Epoch> Checkpoint(DiskNo disk, std::string_view name) ARCHIL_EXCLUDES(mu_);
  Result<std::vector<CheckpointInfo>> Checkpoints(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  // ServedDisks:
  Status DeleteCheckpoint(DiskNo disk, std::string_view name) override ARCHIL_EXCLUDES(mu_);
  Result<std::shared_ptr<DiskFs>> OpenCheckpoint(DiskNo disk, std::string_view name) override
      ARCHIL_EXCLUDES(mu_);
  // A read-only view of disk `disk`'s head as it is now: every read of it sees this one moment
  // (a RocksDB snapshot, released with the view), whatever is written meanwhile. Reading a file
  // whose blocks were freed and whose segment died since fails (ENOENT or Corruption from the
  // segment files), as the moment's data is not kept for it. For a search that must see one
  // state of many files (a grep). REQUIRES: the engine outlives the view.
  Result<std::shared_ptr<DiskFs>> OpenSnapshot(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  // Makes disk `child` a writable branch of `parent` as of checkpoint `checkpoint`, named
  // `branch_name` (unique within the lineage). O(1). NotFound for an unknown parent or
  // checkpoint; AlreadyExists if `child` or the name exists.
  Status CreateBranch(DiskNo parent, std::string_view checkpoint, DiskNo child,
                      std::string_view branch_name) ARCHIL_EXCLUDES(mu_);
  // The same, with an Idempotency-Key (BranchRequest), in one synced commit.
  Result<BranchCreated> CreateBranch(const BranchRequest& request) ARCHIL_EXCLUDES(mu_);
  // Every branch of the lineage `disk` belongs to (hidden ones marked), oldest first. NotFound if
  // the disk is unknown.
  Result<std::vector<BranchInfo>> Branches(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  Result<LineageInfo> Lineage(DiskNo disk) override ARCHIL_EXCLUDES(mu_);  // TierSource

  // ---- ownership (docs/tiering.md §5) ----
  // This engine's identity, made when its directory was (SERVER record).
  const std::array<uint8_t, 16>& server_id() const { return server_id_; }
  // TierSource's owner generation (the OWNER record).
  uint32_t owner_gen() const override { return owner_gen_.load(); }
  // Raises it, durably. FailedPrecondition below the current one.
  Status SetOwnerGen(uint32_t gen);

  uint64_t boot_verifier() const override { return boot_verifier_; }  // ServedDisks

  // ---- disk-server sessions (ServedDisks; engine_sessions.cc) ----
  Status PutSession(DiskNo disk, const SessionIdBytes& id, const SessionRecord& record) override;
  Status DeleteSession(DiskNo disk, const SessionIdBytes& id) override;
  Result<std::vector<StoredSession>> Sessions(DiskNo disk) override;
  CommitEpilogue SlotEpilogue(DiskNo disk, const SessionIdBytes& id, uint32_t slot,
                              std::function<SlotRecord(const CommitResult&)> make) override;

  // Syncs every open segment and drops the intents that made redundant (what the background
  // syncer does every intent_sync_ms).
  Status SyncIntents() ARCHIL_EXCLUDES(mu_);
  // Gives back space that deletes freed but the engine still holds: closes every open segment
  // with nothing live (its file goes, or with a tier it is sealed for upload), syncs the rest and
  // drops their intents, and flushes the WAL that held the bytes of small writes. What the space
  // guard runs before it refuses a write with ENOSPC (engine/space/space_guard.h).
  Status Reclaim() ARCHIL_EXCLUDES(mu_);

  CommitStats commit_stats() const { return queue_->stats(); }
  // Data bytes disk `disk`'s own segments hold live (a branch: what it adds to its parent).
  Result<uint64_t> StoredBytes(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  // Data bytes deleting the checkpoint would free now (what only it references).
  Result<uint64_t> CheckpointUniqueBytes(DiskNo disk, std::string_view name) ARCHIL_EXCLUDES(mu_);
  // ---- the commit log (with log_commits; TierSource's, and recovery's; engine_log.cc) ----
  Result<std::vector<std::pair<Seq, std::string>>> OutboxRecords(DiskNo disk, Seq after,
                                                                 size_t max) override;
  // Recovery: writes log records of `disk` (encoded) into the database, in one synced batch.
  // They must continue its log: the first one's seq is one past the disk's COUNTERS.last_seq in
  // the database (1 for a disk it does not hold), and each next one's the next (Corruption
  // otherwise, and nothing is written). REQUIRES: the disk is not loaded in this engine
  // (FailedPrecondition); it is at the next Open. The same batch sets LOCAL.uploaded_seq to the
  // last record's seq: what recovery applies is in the store.
  Status ApplyLogRecords(DiskNo disk, const std::vector<std::string>& records) ARCHIL_EXCLUDES(mu_);
  Status ScanDiskState(
      DiskNo disk, const std::function<Status(Seq)>& begin,
      const std::function<Status(Cf, std::string_view, std::string_view)>& each) override;
  // Recovery: writes part of a snapshot of `disk` at `seq` (entries as ScanDiskState gave them,
  // each cf a logged CF, each key the disk's) in one synced batch, with LOCAL.uploaded_seq =
  // `seq`. With `first`, the database must hold nothing of the disk's log yet (no COUNTERS:
  // FailedPrecondition otherwise). REQUIRES: the disk is not loaded (FailedPrecondition).
  Status ApplySnapshotEntries(DiskNo disk, Seq seq, bool first,
                              const std::vector<std::tuple<Cf, std::string, std::string>>& entries)
      ARCHIL_EXCLUDES(mu_);
  Result<Seq> UploadedSeq(DiskNo disk) override;
  Result<Seq> LastSeq(DiskNo disk) override;
  Status LogShipped(DiskNo disk, Seq through) override;
  Result<bool> SegmentStored(DiskNo disk, SegNo seg) override;
  Result<std::vector<std::pair<SegNo, std::string>>> SegmentFilesOf(DiskNo disk) override;

  // ---- the tier (docs/tiering.md §1; engine_tier.cc) ----
  Result<std::vector<SealedSegment>> SealedSegments() override ARCHIL_EXCLUDES(mu_);
  // Seals every disk's open segment whose first block was written `age_ns` or more ago (what the
  // syncer does with seal_age_ms). Each disk's next write opens a new segment.
  Status SealSegmentsOlderThan(int64_t age_ns) ARCHIL_EXCLUDES(mu_);
  // See keep_segments_until_uploaded.
  Status SegmentUploaded(DiskNo disk, SegNo seg, bool stored_by_link) override ARCHIL_EXCLUDES(mu_);
  // Diagnostics and tests: checks the rules that tie records together (every extent points at a
  // live block; each live block is held by exactly one head extent or deadlist entry; every
  // history version has its deadlist entry). Internal naming the first violation. Waits for the
  // purges of deleted disks first (and returns their error, if any).
  Status CheckInvariants() ARCHIL_EXCLUDES(mu_);
  // Tests: flushes the memtables of these column families (each on its own, as RocksDB does when
  // one fills) and waits, so that a restart recovers them from SST files and the rest from the WAL.
  Status FlushColumnFamilies(const std::vector<Cf>& cfs);
  // Diagnostics and tests: how many keys of `disk` column family `cf` holds.
  Result<uint64_t> CountKeys(DiskNo disk, Cf cf);

 private:
  explicit Engine(const EngineOptions& options);
  Status OpenDb();
  Status CheckSchema();
  Status LoadDisks();
  Status ReplayIntents();
  // Frees a deleted disk's space: its segment files, then its keys.
  Status FinishDelete(DiskNo disk);
  // Every SEG record of `disk`, in segment order (engine_tier.cc).
  Result<std::vector<std::pair<SegNo, SegRecord>>> SegRecordsOf(DiskNo disk);
  // Recovery (engine_log.cc): FailedPrecondition if `disk` is loaded; LOCAL.uploaded_seq = `seq`
  // into `batch`, the rest of LOCAL kept.
  Status CheckNotLoaded(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  Status PutUploadedSeq(rocksdb::WriteBatch* batch, DiskNo disk, Seq seq);
  void QueuePurge(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  void PurgeLoop() ARCHIL_EXCLUDES(mu_);
  // The branch of the lineage rooted at `root` made with Idempotency-Key `key`, if any.
  Result<std::optional<BranchInfo>> FindByIdempotencyKey(Txn& t, DiskNo root, std::string_view key);
  // The head of a disk, hidden ones included. NotFound if unknown.
  Result<std::shared_ptr<DiskFs>> Head(DiskNo disk) ARCHIL_EXCLUDES(mu_);
  void SyncLoop();

  const EngineOptions options_;
  uint64_t boot_verifier_ = 0;
  std::array<uint8_t, 16> server_id_{};
  std::atomic<uint32_t> owner_gen_{1};
  std::unique_ptr<rocksdb::Env> rocks_env_;
  std::shared_ptr<rocksdb::SstFileManager> sst_files_;
  std::shared_ptr<rocksdb::EventListener> wal_errors_;  // breaks the queue (engine.cc)
  std::unique_ptr<rocksdb::DB> db_;
  EngineCore core_;
  std::unique_ptr<CommitLog> log_;  // with log_commits
  std::unique_ptr<CommitQueue> queue_;
  std::unique_ptr<SegmentFiles> segments_;
  Lineages lineages_;
  std::unique_ptr<SpaceGuard> space_;

  Mutex create_mu_;  // one CreateDisk at a time; taken before mu_
  Mutex mu_;
  std::map<uint64_t, std::shared_ptr<DiskFs>> disks_ ARCHIL_GUARDED_BY(mu_);
  std::set<uint64_t> hidden_ ARCHIL_GUARDED_BY(mu_);  // deleted, kept for their branches
  CondVar stop_cv_{&mu_};
  bool stop_ ARCHIL_GUARDED_BY(mu_) = false;
  std::thread syncer_;
  // With a tier: deleted disks whose bucket mark is still to be written -> their roots.
  std::map<uint64_t, uint64_t> to_mark_ ARCHIL_GUARDED_BY(mu_);
  // Deleted disks whose space is still to be freed, oldest first; the purger frees them.
  std::deque<DiskNo> purges_ ARCHIL_GUARDED_BY(mu_);
  bool purging_ ARCHIL_GUARDED_BY(mu_) = false;  // the purger holds one taken from purges_
  Status purge_error_ ARCHIL_GUARDED_BY(mu_);
  CondVar purge_cv_{&mu_};  // purges_ grew, a purge finished, or stop_
  std::thread purger_;
};

}  // namespace archil::engine
