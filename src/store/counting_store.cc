#include "store/counting_store.h"

#include <time.h>

namespace archil::store {
namespace {

int64_t NowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

StoreOutcome OutcomeOf(const Status& s) {
  switch (s.code()) {
    case Status::Code::kOk:
      return StoreOutcome::kOk;
    case Status::Code::kNotFound:
      return StoreOutcome::kNotFound;
    case Status::Code::kAlreadyExists:
    case Status::Code::kFailedPrecondition:
      return StoreOutcome::kRefused;
    default:
      return StoreOutcome::kError;
  }
}

}  // namespace

const char* StoreCallName(StoreCall c) {
  switch (c) {
    case StoreCall::kPut:
      return "put";
    case StoreCall::kPutFile:
      return "put_file";
    case StoreCall::kGet:
      return "get";
    case StoreCall::kHead:
      return "head";
    case StoreCall::kList:
      return "list";
    case StoreCall::kDelete:
      return "delete";
  }
  return "unknown";
}

const char* StoreOutcomeName(StoreOutcome o) {
  switch (o) {
    case StoreOutcome::kOk:
      return "ok";
    case StoreOutcome::kNotFound:
      return "not_found";
    case StoreOutcome::kRefused:
      return "refused";
    case StoreOutcome::kError:
      return "error";
  }
  return "unknown";
}

void CountingStore::Ended(StoreCall c, int64_t start_ns, const Status& s) {
  StoreCallCounts& n = counts_[static_cast<size_t>(c)];
  n.ended[static_cast<size_t>(OutcomeOf(s))].fetch_add(1, std::memory_order_relaxed);
  n.nanos.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, NowNs() - start_ns)),
                    std::memory_order_relaxed);
}

Result<std::string> CountingStore::Put(std::string_view key, std::string_view data,
                                       const PutOptions& options) {
  const int64_t start = NowNs();
  Result<std::string> r = inner_->Put(key, data, options);
  Ended(StoreCall::kPut, start, r.status());
  if (r.ok()) counts_[size_t(StoreCall::kPut)].bytes_sent.fetch_add(data.size());
  return r;
}

Result<ObjectStore::FileUpload> CountingStore::PutFile(std::string_view key,
                                                       const std::string& path, uint64_t size) {
  const int64_t start = NowNs();
  Result<FileUpload> r = inner_->PutFile(key, path, size);
  Ended(StoreCall::kPutFile, start, r.status());
  if (r.ok()) counts_[size_t(StoreCall::kPutFile)].bytes_sent.fetch_add(size);
  return r;
}

Result<std::string> CountingStore::Get(std::string_view key, uint64_t offset, uint64_t length) {
  const int64_t start = NowNs();
  Result<std::string> r = inner_->Get(key, offset, length);
  Ended(StoreCall::kGet, start, r.status());
  if (r.ok()) counts_[size_t(StoreCall::kGet)].bytes_received.fetch_add(r->size());
  return r;
}

Result<ObjectInfo> CountingStore::Head(std::string_view key) {
  const int64_t start = NowNs();
  Result<ObjectInfo> r = inner_->Head(key);
  Ended(StoreCall::kHead, start, r.status());
  return r;
}

Result<ListPage> CountingStore::List(std::string_view prefix, std::string_view start_after,
                                     size_t limit) {
  const int64_t start = NowNs();
  Result<ListPage> r = inner_->List(prefix, start_after, limit);
  Ended(StoreCall::kList, start, r.status());
  return r;
}

Status CountingStore::Delete(std::string_view key) {
  const int64_t start = NowNs();
  Status s = inner_->Delete(key);
  Ended(StoreCall::kDelete, start, s);
  return s;
}

}  // namespace archil::store
