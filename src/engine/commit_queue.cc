#include "engine/commit_queue.h"

#include <cerrno>

namespace archil::engine {

struct CommitQueue::Entry {
  std::function<Status(Txn&)> prepare;
  Status result;
  bool done = false;
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
}

void Txn::Delete(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  batch_->Delete(cf, rocksdb::Slice(key.data(), key.size()));
  wrote_ = true;
}

void Txn::Merge(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view operand) {
  batch_->Merge(cf, rocksdb::Slice(key.data(), key.size()),
                rocksdb::Slice(operand.data(), operand.size()));
  wrote_ = true;
}

CommitQueue::CommitQueue(rocksdb::DB* db, CommitQueueOptions options) : db_(db), options_(options) {
  thread_ = std::thread([this] { Loop(); });
}

CommitQueue::~CommitQueue() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    work_.SignalAll();
  }
  thread_.join();
}

Status CommitQueue::Commit(std::function<Status(Txn&)> prepare) {
  Entry e;
  e.prepare = std::move(prepare);
  MutexLock lock(&mu_);
  if (stop_) return Status::Unavailable("engine is shutting down");
  queue_.push_back(&e);
  work_.Signal();
  while (!e.done) done_.Wait(&mu_);
  return e.result;
}

CommitStats CommitQueue::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

void CommitQueue::Loop() {
  std::vector<Entry*> group;
  for (;;) {
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stop_) work_.Wait(&mu_);
      if (queue_.empty() && stop_) return;
      while (!queue_.empty() && group.size() < options_.max_group_ops) {
        group.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    RunGroup(group);
    {
      MutexLock lock(&mu_);
      for (Entry* e : group) e->done = true;
      done_.SignalAll();
    }
    group.clear();
  }
}

void CommitQueue::RunGroup(std::vector<Entry*>& group) {
  // overwrite_key = false: the index keeps every update, so Get sees Merge/Put/Delete in order.
  rocksdb::WriteBatchWithIndex batch(rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/false);
  std::vector<std::function<void()>> on_commit;
  std::vector<std::function<void()>> on_abort;
  std::vector<bool> wrote(group.size(), false);
  for (size_t i = 0; i < group.size(); ++i) {
    Entry* e = group[i];
    batch.SetSavePoint();
    Txn txn(db_, &batch);
    e->result = e->prepare(txn);
    if (!e->result.ok()) {
      rocksdb::Status rb = batch.RollbackToSavePoint();
      if (!rb.ok()) e->result = FromRocks(rb, "roll back a failed mutation");
      continue;
    }
    batch.PopSavePoint();
    wrote[i] = txn.wrote_;
    for (auto& fn : txn.on_commit_) on_commit.push_back(std::move(fn));
    for (auto& fn : txn.on_abort_) on_abort.push_back(std::move(fn));
  }
  uint64_t writes = 0;
  if (batch.GetWriteBatch()->Count() > 0) {
    rocksdb::WriteOptions wo;
    wo.sync = options_.sync;
    Status s = FromRocks(db_->Write(wo, batch.GetWriteBatch()), "commit");
    writes = 1;
    if (!s.ok()) {
      for (size_t i = 0; i < group.size(); ++i) {
        if (wrote[i] && group[i]->result.ok()) group[i]->result = s;
      }
      on_commit.clear();
      // Undo in the reverse order of the prepares that changed memory.
      for (auto it = on_abort.rbegin(); it != on_abort.rend(); ++it) (*it)();
    }
  }
  for (auto& fn : on_commit) fn();
  MutexLock lock(&mu_);
  stats_.ops += group.size();
  stats_.groups += writes;
}

}  // namespace archil::engine
