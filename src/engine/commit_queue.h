// CommitQueue: the engine's sequencer and group commit.
//
// Every mutation of every disk is a `prepare` function that runs on the one commit thread, in
// submission order, against a Txn: the database as of the group's start plus the writes of the
// mutations before it in the same group (read your own group's writes). What it writes joins the
// group's WriteBatch; one Write(sync=true) makes the whole group durable: one WAL sync for every
// mutation that arrived while the previous group was syncing. A caller blocks until its mutation
// is durable (or failed) and then gets its result.
//
// Because prepares run one at a time, a mutation's reads, its writes and its place in the WAL
// cannot interleave with another's: this is the per-disk serialization the formats rely on (a
// rename's loop check sees a stable tree; a checkpoint's epoch bump is ordered against every op).
//
// A prepare that fails is rolled back alone (savepoint); the others in its group still commit.
// If the group's Write fails, every mutation in the group fails with that error and nothing of it
// is applied (RocksDB writes a batch atomically); after such an error RocksDB may refuse further
// writes until the engine reopens it.
//
// Thread-safety: Commit may be called from any number of threads. REQUIRES: the DB and its column
// families outlive the queue.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "engine/column_families.h"

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
  // Runs after the group is durable, on the commit thread, before the caller wakes: for in-memory
  // state that must change only with the data (caches, counters).
  void OnCommit(std::function<void()> fn) { on_commit_.push_back(std::move(fn)); }
  // Runs if the group's Write fails after this prepare succeeded: undoes in-memory state the
  // prepare changed at once (so that later prepares of its group saw it, e.g. an epoch bump).
  void OnAbort(std::function<void()> fn) { on_abort_.push_back(std::move(fn)); }

 private:
  friend class CommitQueue;
  rocksdb::DB* db_;
  rocksdb::WriteBatchWithIndex* batch_;
  std::vector<std::function<void()>> on_commit_;
  std::vector<std::function<void()>> on_abort_;
  bool wrote_ = false;
};

struct CommitQueueOptions {
  size_t max_group_ops = 256;  // at most this many mutations share one Write
  bool sync = true;            // Write(sync=true); false only for benchmarks of the engine alone
};

struct CommitStats {
  uint64_t ops = 0;     // prepares run
  uint64_t groups = 0;  // Writes issued
};

class CommitQueue {
 public:
  explicit CommitQueue(rocksdb::DB* db, CommitQueueOptions options = {});
  ~CommitQueue();  // finishes the mutations already queued, then stops the thread

  // Runs `prepare` on the commit thread (see above) and waits until its writes are durable.
  // Returns prepare's error (nothing of it written), the group Write's error, or OK.
  Status Commit(std::function<Status(Txn&)> prepare) ARCHIL_EXCLUDES(mu_);

  // As Commit, for a prepare that computes a value.
  template <typename T>
  Result<T> CommitWith(std::function<Result<T>(Txn&)> prepare) {
    std::optional<T> out;
    Status s = Commit([&](Txn& txn) -> Status {
      Result<T> r = prepare(txn);
      if (!r.ok()) return r.status();
      out = std::move(r).value();
      return Status::Ok();
    });
    if (!s.ok()) return s;
    return std::move(*out);
  }

  CommitStats stats() const ARCHIL_EXCLUDES(mu_);

 private:
  struct Entry;
  void Loop();
  void RunGroup(std::vector<Entry*>& group);

  rocksdb::DB* const db_;
  const CommitQueueOptions options_;
  mutable Mutex mu_;
  CondVar work_{&mu_};
  CondVar done_{&mu_};
  std::deque<Entry*> queue_ ARCHIL_GUARDED_BY(mu_);
  bool stop_ ARCHIL_GUARDED_BY(mu_) = false;
  CommitStats stats_ ARCHIL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace archil::engine
