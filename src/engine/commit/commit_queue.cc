#include "engine/commit/commit_queue.h"

#include <algorithm>
#include <cerrno>

namespace archil::engine {

struct CommitQueue::Entry {
  explicit Entry(Mutex* mu) : wake(mu) {}
  std::function<Status(Txn&)> prepare;
  // Commit's (it outlives the entry: Commit returns only after the entry is done): runs once e
  // is in the queue.
  const std::function<void()>* on_queued = nullptr;
  std::optional<rocksdb::WriteBatch> raw;  // CommitBatch: written alone, instead of a prepare
  bool wait_durable = true;                // false: CommitUnsynced
  Status result;
  bool done = false;  // guarded by the queue's mu_
  bool lead = false;  // guarded by the queue's mu_: the previous leader handed the lead over
  CondVar wake;       // signalled when done or lead is set
};

// What stage 1 leaves for stage 2.
struct CommitQueue::Applied {
  bool wrote = false;  // the group's Write succeeded with something in it
  std::vector<std::function<void()>> on_durable;
};

Result<std::string> Txn::Get(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  std::string value;
  rocksdb::Status s = batch_->GetFromBatchAndDB(db_, rocksdb::ReadOptions(), cf,
                                                rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return Status::NotFound("key absent");
  ARCHIL_RETURN_IF_ERROR(FromRocks(s, "read"));
  return value;
}

std::unique_ptr<rocksdb::Iterator> Txn::NewIterator(rocksdb::ColumnFamilyHandle* cf) {
  static const rocksdb::ReadOptions kOptions;
  return std::unique_ptr<rocksdb::Iterator>(
      batch_->NewIteratorWithBase(cf, db_->NewIterator(kOptions, cf), &kOptions));
}

void Txn::Put(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value) {
  batch_->Put(cf, rocksdb::Slice(key.data(), key.size()),
              rocksdb::Slice(value.data(), value.size()));
  wrote_ = true;
  if (Records(cf)) {
    mutations_.push_back({Mutation::Kind::kPut, cf, std::string(key), std::string(value)});
  }
}

void Txn::Delete(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  batch_->Delete(cf, rocksdb::Slice(key.data(), key.size()));
  wrote_ = true;
  if (Records(cf)) mutations_.push_back({Mutation::Kind::kDelete, cf, std::string(key), {}});
}

void Txn::Merge(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view operand) {
  batch_->Merge(cf, rocksdb::Slice(key.data(), key.size()),
                rocksdb::Slice(operand.data(), operand.size()));
  wrote_ = true;
  if (Records(cf)) {
    mutations_.push_back({Mutation::Kind::kMerge, cf, std::string(key), std::string(operand)});
  }
}

CommitQueue::CommitQueue(rocksdb::DB* db, CommitQueueOptions options)
    : db_(db), options_(options) {}

CommitQueue::~CommitQueue() {
  MutexLock lock(&mu_);
  stop_ = true;
  while (!queue_.empty() || in_flight_ > 0) idle_.Wait(&mu_);
}

Status CommitQueue::Commit(std::function<Status(Txn&)> prepare,
                           const std::function<void()>& on_queued, bool sync) {
  Entry e(&mu_);
  e.prepare = std::move(prepare);
  if (on_queued) e.on_queued = &on_queued;
  e.wait_durable = sync;
  return Enqueue(&e);
}

Status CommitQueue::CommitUnsynced(std::function<Status(Txn&)> prepare) {
  Entry e(&mu_);
  e.prepare = std::move(prepare);
  e.wait_durable = false;
  return Enqueue(&e);
}

Status CommitQueue::Sync() {
  MutexLock lock(&mu_);
  return WaitDurable(written_);
}

Status CommitQueue::CommitBatch(rocksdb::WriteBatch batch) {
  Entry e(&mu_);
  e.raw = std::move(batch);
  return Enqueue(&e);
}

Status CommitQueue::Enqueue(Entry* e) {
  {
    MutexLock lock(&mu_);
    if (stop_) return Status::Unavailable("engine is shutting down");
    if (!broken_.ok()) return broken_;
    queue_.push_back(e);
    if (!leading_) {
      // No group applies, so the queue held nothing before e: e is at its front.
      leading_ = true;
      e->lead = true;
    }
    if (e->on_queued) {
      // Outside mu_: the hook may start mutations of its own (on other threads), queued after e.
      mu_.Unlock();
      (*e->on_queued)();
      mu_.Lock();
    }
    while (!e->done && !e->lead) e->wake.Wait(&mu_);
    if (e->done) return e->result;
  }
  Lead();  // e is at the front of the queue, so the group includes it
  MutexLock lock(&mu_);
  return e->result;
}

CommitStats CommitQueue::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

Status CommitQueue::health() const {
  MutexLock lock(&mu_);
  return broken_;
}

void CommitQueue::Lead() {
  std::vector<Entry*> group;
  bool broken = false;
  {
    MutexLock lock(&mu_);
    // A raw batch is a group of its own.
    while (!queue_.empty() && group.size() < options_.max_group_ops &&
           (group.empty() || (!group.front()->raw && !queue_.front()->raw))) {
      group.push_back(queue_.front());
      queue_.pop_front();
    }
    ++in_flight_;
    if (!broken_.ok()) {
      // Queued before a sync failed: once one has, nothing more is written.
      broken = true;
      for (Entry* e : group) e->result = broken_;
    }
  }
  Applied applied;
  if (!broken) applied = Apply(group);

  MutexLock lock(&mu_);
  stats_.ops += group.size();
  // Stage 1 is over: the next group may apply while this one syncs.
  if (queue_.empty()) {
    leading_ = false;
  } else {
    queue_.front()->lead = true;
    queue_.front()->wake.Signal();
  }
  Entry* const own = group.front();     // the leader's: it is not waiting, so it needs no signal
  std::vector<Entry*> waiting = group;  // not answered yet
  if (applied.wrote) {
    const uint64_t seq = ++written_;
    stats_.groups++;
    // Callers that do not wait for the sync are answered now; from here on they may be gone.
    bool must_sync = !applied.on_durable.empty();
    std::erase_if(waiting, [&](Entry* e) {
      if (e->wait_durable) return false;
      e->done = true;
      if (e != own) e->wake.Signal();
      return true;
    });
    must_sync = must_sync || !waiting.empty();
    Status durable = must_sync ? WaitDurable(seq) : Status::Ok();
    if (durable.ok()) {
      mu_.Unlock();
      for (auto& fn : applied.on_durable) fn();
      mu_.Lock();
    } else {
      for (Entry* e : waiting) {
        if (e->result.ok()) e->result = durable;
      }
    }
  }
  for (Entry* e : waiting) {
    e->done = true;
    if (e != own) e->wake.Signal();
  }
  --in_flight_;
  idle_.SignalAll();
}

Status CommitQueue::WriteExclusive(const rocksdb::WriteOptions& wo, rocksdb::WriteBatch* batch) {
  {
    MutexLock lock(&mu_);
    while (syncing_) sync_done_.Wait(&mu_);
    writing_ = true;
  }
  Status s = FromRocks(db_->Write(wo, batch), "write");
  MutexLock lock(&mu_);
  writing_ = false;
  sync_done_.SignalAll();
  return s;
}

void CommitQueue::Break(const Status& s) {
  MutexLock lock(&mu_);
  if (broken_.ok()) broken_ = s.WithContext("a write to the WAL failed; reopen the engine");
  sync_done_.SignalAll();
}

Status CommitQueue::WaitDurable(uint64_t seq) {
  if (!options_.sync) return Status::Ok();
  for (;;) {
    if (!broken_.ok()) return broken_;
    if (synced_through_ >= seq) return Status::Ok();
    if (syncing_ || writing_) {
      // A sync running may have begun before this group's Write: wait, then look again. A
      // Write running must finish first (see WriteExclusive).
      sync_done_.Wait(&mu_);
      continue;
    }
    // Every group numbered <= written_ has been written to the WAL: this sync covers them.
    const uint64_t target = written_;
    syncing_ = true;
    stats_.syncs++;
    mu_.Unlock();
    Status s = FromRocks(db_->SyncWAL(), "sync the write-ahead log");
    mu_.Lock();
    syncing_ = false;
    if (s.ok()) {
      synced_through_ = target;
    } else if (broken_.ok()) {
      broken_ = s.WithContext("a WAL sync failed; reopen the engine");
    }
    sync_done_.SignalAll();
  }
}

CommitQueue::Applied CommitQueue::Apply(std::vector<Entry*>& group) {
  // overwrite_key = false: the index keeps every update, so Get sees Merge/Put/Delete in order.
  rocksdb::WriteBatchWithIndex batch(rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/false);
  std::vector<std::function<void()>> on_apply;
  std::vector<std::function<void()>> on_abort;
  std::vector<std::pair<std::string, std::function<Status()>>> before_write;
  Applied applied;
  if (group.front()->raw) {
    Entry* e = group.front();
    rocksdb::WriteOptions wo;
    wo.sync = false;  // stage 2 syncs
    e->result = WriteExclusive(wo, &*e->raw).WithContext("commit a batch");
    if (!e->result.ok()) {
      Break(e->result);
      return applied;
    }
    applied.wrote = true;
    return applied;
  }
  std::vector<bool> wrote;
  auto prepare_rest = [&] {
    for (size_t i = wrote.size(); i < group.size(); ++i) {
      Entry* e = group[i];
      wrote.push_back(false);
      batch.SetSavePoint();
      Txn txn(db_, &batch);
      txn.record_mask_ = options_.finish ? options_.recorded_cf_ids : 0;
      e->result = e->prepare(txn);
      // A hook may register another; each runs once.
      for (size_t k = 0; e->result.ok() && k < txn.at_end_.size(); ++k) {
        e->result = txn.at_end_[k](txn);
      }
      if (e->result.ok() && options_.finish) {
        txn.record_mask_ = 0;
        e->result = options_.finish(txn);
      }
      if (!e->result.ok()) {
        // What it changed in memory goes back with its writes, newest change first.
        for (auto it = txn.on_abort_.rbegin(); it != txn.on_abort_.rend(); ++it) (*it)();
        rocksdb::Status rb = batch.RollbackToSavePoint();
        if (!rb.ok()) e->result = FromRocks(rb, "roll back a failed mutation");
        continue;
      }
      batch.PopSavePoint();
      wrote[i] = txn.wrote_;
      for (auto& fn : txn.on_apply_) on_apply.push_back(std::move(fn));
      for (auto& fn : txn.on_durable_) applied.on_durable.push_back(std::move(fn));
      for (auto& fn : txn.on_abort_) on_abort.push_back(std::move(fn));
      for (auto& kv : txn.before_write_) before_write.push_back(std::move(kv));
    }
  };
  prepare_rest();
  // The write waits for a running sync (WriteExclusive); callers that queued meanwhile join this
  // group rather than the next, so that the next sync covers them too.
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (!syncing_) break;
      while (syncing_) sync_done_.Wait(&mu_);
      while (!queue_.empty() && group.size() < options_.max_group_ops && !queue_.front()->raw) {
        group.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    prepare_rest();
  }
  if (batch.GetWriteBatch()->Count() == 0) {
    // Nothing to make durable, but hooks of prepares that only changed memory still run.
    for (auto& fn : on_apply) fn();
    for (auto& fn : applied.on_durable) fn();
    applied.on_durable.clear();
    return applied;
  }
  // What the records point at is durable before any of them reaches the WAL (SyncBeforeWrite).
  std::vector<std::string_view> synced;
  for (auto& [key, fn] : before_write) {
    if (std::find(synced.begin(), synced.end(), key) != synced.end()) continue;
    synced.push_back(key);
    if (Status s = fn(); !s.ok()) {
      for (Entry* e : group) {
        if (e->result.ok()) e->result = s;
      }
      for (auto it = on_abort.rbegin(); it != on_abort.rend(); ++it) (*it)();
      applied.on_durable.clear();
      return applied;
    }
  }
  rocksdb::WriteOptions wo;
  wo.sync = false;  // stage 2 syncs
  Status s = WriteExclusive(wo, batch.GetWriteBatch()).WithContext("commit");
  if (!s.ok()) {
    for (size_t i = 0; i < group.size(); ++i) {
      if (wrote[i] && group[i]->result.ok()) group[i]->result = s;
    }
    // Undo in the reverse order of the prepares that changed memory.
    for (auto it = on_abort.rbegin(); it != on_abort.rend(); ++it) (*it)();
    applied.on_durable.clear();
    Break(s);
    return applied;
  }
  for (auto& fn : on_apply) fn();
  applied.wrote = true;
  return applied;
}

}  // namespace archil::engine
