#include "engine/column_families.h"

#include "engine/commit_queue.h"

namespace archil::engine {

const std::array<std::string, kNumCfs>& CfNames() {
  static const std::array<std::string, kNumCfs> kNames = {
      "default", "meta", "inode",    "dentry", "xattr",  "chunk",
      "hist",    "dead", "segusage", "intent", "outbox", "session"};
  return kNames;
}

Result<std::string> DbView::Get(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot_;
  std::string value;
  rocksdb::Status s = db_->Get(ro, cf, rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) return Status::NotFound("key absent");
  ARCHIL_RETURN_IF_ERROR(FromRocks(s, "read"));
  return value;
}

std::unique_ptr<rocksdb::Iterator> DbView::NewIterator(rocksdb::ColumnFamilyHandle* cf) {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot_;
  return std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(ro, cf));
}

}  // namespace archil::engine
