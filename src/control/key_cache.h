// KeyCache: API keys this server has verified, so that a request authenticates without a catalog
// read (measurements.md §7.1: the read was 0.08 ms of a create).
//
// It holds a key's row (its secret's hash included: the presented secret is still hashed and
// compared in constant time on every request). The catalog stays the truth: ControlService
// deletes a key in the catalog first and then calls Forget, and a lookup that began before a
// Forget never stores its row afterwards (each Forget ends an epoch; Put takes the epoch that
// Begin returned before the catalog was read). One server owns its catalog (a lock file), so no
// other process removes keys behind it.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/mutex.h"
#include "catalog/model.h"

namespace archil {

class KeyCache {
 public:
  explicit KeyCache(size_t max_keys = 4096) : max_keys_(max_keys) {}

  std::optional<ApiKey> Get(std::string_view id) const ARCHIL_EXCLUDES(mu_);
  // Before reading the catalog: the epoch to give Put.
  uint64_t Begin() const ARCHIL_EXCLUDES(mu_);
  // Stores `key` as read from the catalog, unless a Forget came after `epoch`'s Begin.
  void Put(const ApiKey& key, uint64_t epoch) ARCHIL_EXCLUDES(mu_);
  // After the key's row left the catalog.
  void Forget(std::string_view id) ARCHIL_EXCLUDES(mu_);

 private:
  const size_t max_keys_;
  mutable Mutex mu_;
  uint64_t epoch_ ARCHIL_GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, ApiKey> keys_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil
