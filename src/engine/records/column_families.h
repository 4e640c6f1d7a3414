// The engine's RocksDB column families (docs/formats.md §3.1), by enum, and a read view over the
// database that has the same shape as a Txn, so record loaders work on either.
//
// Thread-safety: Cfs is immutable after Open; a DbView is used by one thread.
#pragma once

#include <rocksdb/db.h>

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace archil::engine {

enum class Cf : size_t {
  kDefault,
  kMeta,
  kInode,
  kDentry,
  kXattr,
  kChunk,
  kHist,
  kDead,
  kSegUsage,
  kIntent,
  kOutbox,
  kSession,
};
inline constexpr size_t kNumCfs = 12;

// RocksDB's names for them, in enum order ("default", "meta", ...).
const std::array<std::string, kNumCfs>& CfNames();

struct Cfs {
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // in enum order
  rocksdb::ColumnFamilyHandle* operator[](Cf cf) const { return handles[static_cast<size_t>(cf)]; }
};

// RocksDB's Status as ours: NotFound, Corruption, IOError (with ENOSPC as NoSpace), Busy...
Status FromRocks(const rocksdb::Status& s, std::string_view what);

// What record loaders read through: a DbView (readers) or a Txn (the commit thread).
class KvReader {
 public:
  virtual ~KvReader() = default;
  // NotFound if absent.
  virtual Result<std::string> Get(rocksdb::ColumnFamilyHandle* cf, std::string_view key) = 0;
  // REQUIRES: used and destroyed while the reader is alive (and, for a Txn, inside its prepare).
  virtual std::unique_ptr<rocksdb::Iterator> NewIterator(rocksdb::ColumnFamilyHandle* cf) = 0;
};

// A consistent read view: every read sees the database as of the view's creation.
class DbView final : public KvReader {
 public:
  explicit DbView(rocksdb::DB* db) : db_(db), snapshot_(db->GetSnapshot()), owned_(true) {}
  // Reads at `pinned`, a snapshot its owner keeps until this view is gone and releases itself.
  DbView(rocksdb::DB* db, const rocksdb::Snapshot* pinned)
      : db_(db), snapshot_(pinned), owned_(false) {}
  ~DbView() override {
    if (owned_) db_->ReleaseSnapshot(snapshot_);
  }
  DbView(const DbView&) = delete;
  DbView& operator=(const DbView&) = delete;

  Result<std::string> Get(rocksdb::ColumnFamilyHandle* cf, std::string_view key) override;
  std::unique_ptr<rocksdb::Iterator> NewIterator(rocksdb::ColumnFamilyHandle* cf) override;

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
  const bool owned_;
};

}  // namespace archil::engine
