// CommitQueue: the engine's sequencer and group commit.
//
// Every mutation of every disk is a `prepare` function that runs, one at a time and in submission
// order, against a Txn: the database as of the group's start plus the writes of the mutations
// before it in the same group (read your own group's writes). What it writes joins the group's
// WriteBatch. A caller blocks until its mutation is durable (or failed) and then gets its result.
//
// Two stages, each run by the callers themselves (as RocksDB's own write path; there is no commit
// thread):
// 1. Apply. A caller that finds no group applying becomes the leader: it takes every queued
//    mutation (its own first), runs their prepares, writes the batch to the WAL and the memtables
//    without a sync (RocksDB: Write with sync=false), runs the OnApply hooks and hands the lead to
//    the oldest waiter. At most one group applies at a time, so the next group's prepares see
//    this one's writes, in memory and in the WAL's order.
// 2. Sync. The leader then waits until a WAL sync that began after its Write has finished
//    (DB::SyncWAL). The first leader to find no sync running starts one; it covers every group
//    written so far, so one sync serves every group applied while the previous sync ran. Then the
//    leader runs its group's OnDurable hooks and wakes its callers.
// So the prepares of the next group overlap the sync of the last one, and a lone caller commits
// on its own thread with no hand-off at all. "The commit thread" in the engine's comments means
// whichever thread leads stage 1.
//
// Visibility: a group's writes are visible to readers (and to later prepares) from its Write on,
// before they are durable. Nothing is acknowledged before it is durable, and the WAL is replayed
// as a prefix, so a later group is never durable without the earlier ones it may have read.
//
// Because prepares run one at a time, a mutation's reads, its writes and its place in the WAL
// cannot interleave with another's: this is the per-disk serialization the formats rely on (a
// rename's loop check sees a stable tree; a checkpoint's epoch bump is ordered against every op).
//
// Failures. A prepare that fails is rolled back alone (savepoint); the others in its group still
// commit. If a group's Write or a WAL sync fails, the queue is broken: the mutations of that group
// (and of every group waiting on that sync) fail with the error, and so does every later Commit,
// until the engine is reopened, which replays the WAL's durable prefix. What failed may or may not
// have reached the device, and RocksDB must not be written again after a failed WAL write (its
// log writer refuses, by assertion in some builds). OnAbort hooks of a failed Write's group run.
//
// Thread-safety: Commit may be called from any number of threads; a prepare or hook must not call
// Commit (it would wait for its own group). REQUIRES: the DB and its column families outlive the
// queue.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "engine/records/column_families.h"

namespace archil::engine {

// The view and batch of one mutation. Only valid inside its prepare function.
class Txn final : public KvReader {
 public:
  Txn(rocksdb::DB* db, rocksdb::WriteBatchWithIndex* batch) : db_(db), batch_(batch) {}

  // The value of `key` in `cf`, seen through the group's earlier writes; NotFound if absent.
  Result<std::string> Get(rocksdb::ColumnFamilyHandle* cf, std::string_view key) override;
  // An iterator over `cf` that sees the group's earlier writes. REQUIRES: used and destroyed
  // inside the prepare that made it.
  std::unique_ptr<rocksdb::Iterator> NewIterator(rocksdb::ColumnFamilyHandle* cf) override;

  void Put(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value);
  void Delete(rocksdb::ColumnFamilyHandle* cf, std::string_view key);
  // REQUIRES: `cf` has a merge operator.
  void Merge(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view operand);

  // With CommitQueueOptions::finish: what the prepare wrote to the recorded column families
  // (recorded_cf_ids), in order; the finisher's own writes are not recorded.
  struct Mutation {
    enum class Kind : uint8_t { kPut, kDelete, kMerge };
    Kind kind;
    rocksdb::ColumnFamilyHandle* cf;
    std::string key;
    std::string value;  // the operand of a merge; empty for a delete
  };
  const std::vector<Mutation>& mutations() const { return mutations_; }
  // Runs once the group's Write succeeded, before the next group's prepares: for in-memory state
  // that must change with what the database shows (caches, counters, flags later prepares read).
  void OnApply(std::function<void()> fn) { on_apply_.push_back(std::move(fn)); }
  // Runs once the group is durable, before its callers wake: for effects outside the database
  // that are safe only when the records that allow them can no longer be lost (deleting a file
  // the records stopped naming). Skipped if the sync fails.
  void OnDurable(std::function<void()> fn) { on_durable_.push_back(std::move(fn)); }
  // Runs if this prepare's writes never reach the database: the prepare (or the finisher) fails
  // after registering it, so that its writes are rolled back, or its group's Write (or a
  // SyncBeforeWrite hook) fails. Undoes in-memory state the prepare changed at once (so that
  // later prepares of its group saw it: an epoch bump, the open segment's cursor). Hooks run
  // newest first, so each may restore the state as it found it.
  void OnAbort(std::function<void()> fn) { on_abort_.push_back(std::move(fn)); }
  // Runs after every prepare of the group and before its Write, once per `key` in the group
  // (the first registration wins): to make durable what the group's records will point at (a
  // segment's data, formats.md invariant 2), with one fdatasync for every write of the group.
  // If it fails, nothing of the group is written: each of its mutations fails with the error and
  // the OnAbort hooks run, but the queue is not broken (the database was not touched).
  void SyncBeforeWrite(std::string key, std::function<Status()> fn) {
    before_write_.emplace_back(std::move(key), std::move(fn));
  }
  // Runs once per `key` after this prepare returned OK (the first registration wins), on this
  // Txn, before the finisher: its writes and its error are the prepare's. For a check that each
  // of many steps of one prepare would repeat (a segment's liveness after each of the many frees
  // of a batch of removes), done once on what they all left.
  void AtEnd(const std::string& key, std::function<Status(Txn&)> fn) {
    if (at_end_keys_.insert(key).second) at_end_.push_back(std::move(fn));
  }

 private:
  friend class CommitQueue;
  rocksdb::DB* db_;
  rocksdb::WriteBatchWithIndex* batch_;
  std::vector<std::function<void()>> on_apply_;
  std::vector<std::function<void()>> on_durable_;
  std::vector<std::function<void()>> on_abort_;
  std::vector<std::pair<std::string, std::function<Status()>>> before_write_;
  std::vector<std::function<Status(Txn&)>> at_end_;
  std::unordered_set<std::string> at_end_keys_;
  bool wrote_ = false;
  bool Records(rocksdb::ColumnFamilyHandle* cf) const {
    const uint32_t id = cf->GetID();
    return id < 64 && ((record_mask_ >> id) & 1);
  }
  uint64_t record_mask_ = 0;  // recorded column family ids; 0: nothing is recorded
  std::vector<Mutation> mutations_;
};

struct CommitQueueOptions {
  size_t max_group_ops = 256;  // at most this many mutations share one Write
  bool sync = true;            // sync the WAL; false only for benchmarks of the engine alone
  // If set, every prepare's Txn records its writes (Txn::mutations), and after a prepare succeeds
  // `finish` runs on the same Txn, inside the prepare's savepoint: its writes join the
  // mutation's, and its error fails the mutation as the prepare's would (nothing of it written).
  // The engine writes its log records here (engine/commit/commit_log.h).
  std::function<Status(Txn&)> finish;
  // The column families whose writes are recorded, by RocksDB id (bit i: id i; ids above 63 are
  // never recorded): the others' bytes (the intents' data) are not copied for nothing.
  uint64_t recorded_cf_ids = ~uint64_t{0};
};

struct CommitStats {
  uint64_t ops = 0;     // prepares run
  uint64_t groups = 0;  // Writes issued
  uint64_t syncs = 0;   // WAL syncs issued
};

class CommitQueue {
 public:
  explicit CommitQueue(rocksdb::DB* db, CommitQueueOptions options = {});
  ~CommitQueue();  // refuses new mutations, and waits for the queued ones to finish

  // Runs `prepare` in its turn (see above) and returns once its writes are durable.
  // Returns prepare's error (nothing of it written), the group Write's error, the WAL sync's
  // error (see Failures above), or OK.
  // `on_queued`, if set, runs on the caller's thread as soon as the mutation has its place in the
  // queue: every Commit that begins after it returns runs its prepare after this one's, and sees
  // its writes. It does not run if the queue refuses the mutation (stopping or broken). This is
  // how a caller orders dependent mutations without waiting for each one's sync (the disk
  // server's writes to one file, ADR 0015).
  // `on_queued` is used by reference (not copied): Commit returns only after it ran or never will.
  // `sync` false: returns once the mutation's group is written, as CommitUnsynced.
  Status Commit(std::function<Status(Txn&)> prepare, const std::function<void()>& on_queued = {},
                bool sync = true) ARCHIL_EXCLUDES(mu_);

  // As Commit, but returns once the mutation's group is written, without waiting for the WAL sync:
  // it becomes durable with the next sync (any later Commit's, or the engine's syncer), and later
  // mutations that read it are never durable without it (the WAL is replayed as a prefix). For
  // records whose loss in a crash the caller can repair or does not need (ADR 0010: the engine's
  // copy of a catalog fact; protocol.md §7: session records). Its OnDurable hooks still wait.
  Status CommitUnsynced(std::function<Status(Txn&)> prepare) ARCHIL_EXCLUDES(mu_);

  // Makes every group written so far durable: one WAL sync, unless a sync that began after the
  // last Write already covers them (then none). The COMMIT of unsynced mutations (protocol.md
  // §8.2), and the engine's syncer's bound on how long one stays unsynced. Returns the queue's
  // error if it is broken (see Failures above).
  Status Sync() ARCHIL_EXCLUDES(mu_);

  // Writes `batch` as a group of its own, durably, in its turn: for writes a Txn cannot express
  // (range deletes). Later prepares see it. Every RocksDB write of an open engine goes through
  // the queue, so that none follows a failed one.
  Status CommitBatch(rocksdb::WriteBatch batch) ARCHIL_EXCLUDES(mu_);

  // As Commit, for a prepare that computes a value.
  template <typename T>
  Result<T> CommitWith(std::function<Result<T>(Txn&)> prepare,
                       const std::function<void()>& on_queued = {}, bool sync = true) {
    std::optional<T> out;
    Status s = Commit(
        [&](Txn& txn) -> Status {
          Result<T> r = prepare(txn);
          if (!r.ok()) return r.status();
          out = std::move(r).value();
          return Status::Ok();
        },
        on_queued, sync);
    if (!s.ok()) return s;
    return std::move(*out);
  }

  // Breaks the queue from outside (see Failures above): RocksDB reported an error in work of its
  // own that may have left a WAL file in error (a flush syncs the WAL files it closes), after
  // which a WAL sync must not run.
  void Fail(const Status& s) ARCHIL_EXCLUDES(mu_) { Break(s); }

  CommitStats stats() const ARCHIL_EXCLUDES(mu_);
  // OK, or the error that broke the queue (see Failures above).
  Status health() const ARCHIL_EXCLUDES(mu_);

 private:
  struct Entry;
  struct Applied;
  // Queues `e` and returns its result once it is durable or failed.
  Status Enqueue(Entry* e) ARCHIL_EXCLUDES(mu_);
  // Stage 1 for one group from the front of the queue, then the lead passes on; stage 2 for it,
  // then its callers wake. REQUIRES: the caller leads and its entry is at the queue's front.
  void Lead() ARCHIL_EXCLUDES(mu_);
  // Runs the group's prepares (or writes its one raw batch) and its Write; fills in each entry's
  // result. A failed Write breaks the queue.
  Applied Apply(std::vector<Entry*>& group) ARCHIL_EXCLUDES(mu_);
  // db_->Write, never while a WAL sync runs (nor a sync while it runs): RocksDB's log writer
  // asserts, and aborts the process, when a sync meets an error a concurrent write left on it.
  // The group's prepares still overlap the previous group's sync; only the write itself waits.
  Status WriteExclusive(const rocksdb::WriteOptions& wo, rocksdb::WriteBatch* batch)
      ARCHIL_EXCLUDES(mu_);
  // Breaks the queue with `s` (the first error wins).
  void Break(const Status& s) ARCHIL_EXCLUDES(mu_);
  // Returns once a WAL sync that began after group `seq` was written has finished, or its error.
  Status WaitDurable(uint64_t seq) ARCHIL_REQUIRES(mu_);

  rocksdb::DB* const db_;
  const CommitQueueOptions options_;
  mutable Mutex mu_;
  CondVar idle_{&mu_};       // signalled when a group finishes
  CondVar sync_done_{&mu_};  // signalled when a WAL sync or a Write finishes
  std::deque<Entry*> queue_ ARCHIL_GUARDED_BY(mu_);
  bool leading_ ARCHIL_GUARDED_BY(mu_) = false;  // a caller leads; queue_ non-empty implies it
  bool stop_ ARCHIL_GUARDED_BY(mu_) = false;
  int in_flight_ ARCHIL_GUARDED_BY(mu_) = 0;     // groups taken and not yet finished
  uint64_t written_ ARCHIL_GUARDED_BY(mu_) = 0;  // groups whose Write succeeded, numbered 1, 2..
  uint64_t synced_through_ ARCHIL_GUARDED_BY(mu_) = 0;  // groups numbered <= this are durable
  bool syncing_ ARCHIL_GUARDED_BY(mu_) = false;         // a leader runs SyncWAL
  bool writing_ ARCHIL_GUARDED_BY(mu_) = false;         // a leader runs db_->Write
  Status broken_ ARCHIL_GUARDED_BY(mu_);  // a Write or a WAL sync failed: every Commit fails
  CommitStats stats_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil::engine
