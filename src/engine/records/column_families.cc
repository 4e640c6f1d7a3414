#include "engine/records/column_families.h"

#include <cerrno>

namespace archil::engine {

Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::Ok();
  std::string msg = std::string(what) + ": " + s.ToString();
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsNoSpace()) return Status::Errno(ENOSPC, msg);
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) return Status::Unavailable(msg);
  if (s.IsInvalidArgument() || s.IsNotSupported()) return Status::Internal(msg);
  return Status::Errno(EIO, msg);
}

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
