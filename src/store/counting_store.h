// CountingStore: an ObjectStore that counts what passes through it to another, by kind of call,
// for the server's metrics (archil_store_*, docs/operations.md): calls, how they ended, their
// seconds, and the bytes sent and received. Counted once per call as the caller sees it, after the
// inner store's own retries (an S3 request sent three times is one call).
//
// How a call ended: ok; not_found (a Get or Head of a missing object: an answer, not a fault);
// refused (a conditional write refused: kAlreadyExists or kFailedPrecondition, the fence and the
// lease at work); error (anything else: the store could not be reached, or failed).
//
// Thread-safety: as the inner store; the counts are atomics, readable from any thread.
#pragma once

#include <array>
#include <atomic>
#include <memory>

#include "store/object_store.h"

namespace archil::store {

enum class StoreCall { kPut, kPutFile, kGet, kHead, kList, kDelete };
inline constexpr size_t kStoreCallKinds = 6;
enum class StoreOutcome { kOk, kNotFound, kRefused, kError };
inline constexpr size_t kStoreOutcomes = 4;

const char* StoreCallName(StoreCall c);        // "put", "put_file", ...
const char* StoreOutcomeName(StoreOutcome o);  // "ok", "not_found", "refused", "error"

struct StoreCallCounts {
  std::array<std::atomic<uint64_t>, kStoreOutcomes> ended{};  // by StoreOutcome
  std::atomic<uint64_t> nanos{0};                             // summed over every call
  std::atomic<uint64_t> bytes_sent{0};                        // object data sent (puts)
  std::atomic<uint64_t> bytes_received{0};                    // object data received (gets)
};

class CountingStore final : public ObjectStore {
 public:
  explicit CountingStore(std::unique_ptr<ObjectStore> inner) : inner_(std::move(inner)) {}

  const StoreCallCounts& counts(StoreCall c) const { return counts_[static_cast<size_t>(c)]; }

  Result<std::string> Put(std::string_view key, std::string_view data,
                          const PutOptions& options) override;
  Result<FileUpload> PutFile(std::string_view key, const std::string& path, uint64_t size) override;
  Result<std::string> Get(std::string_view key, uint64_t offset, uint64_t length) override;
  Result<ObjectInfo> Head(std::string_view key) override;
  Result<ListPage> List(std::string_view prefix, std::string_view start_after,
                        size_t limit) override;
  Status Delete(std::string_view key) override;
  bool HoldsFile(std::string_view key, const std::string& path) override {
    return inner_->HoldsFile(key, path);
  }
  bool EnforcesConditions() const override { return inner_->EnforcesConditions(); }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  // Counts one call of kind `c` that began at `start_ns` and ended with `s`.
  void Ended(StoreCall c, int64_t start_ns, const Status& s);

  const std::unique_ptr<ObjectStore> inner_;
  std::array<StoreCallCounts, kStoreCallKinds> counts_;
};

}  // namespace archil::store
