#include "control/key_cache.h"

namespace archil {

std::optional<ApiKey> KeyCache::Get(std::string_view id) const {
  MutexLock lock(&mu_);
  auto it = keys_.find(std::string(id));
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

uint64_t KeyCache::Begin() const {
  MutexLock lock(&mu_);
  return epoch_;
}

void KeyCache::Put(const ApiKey& key, uint64_t epoch) {
  MutexLock lock(&mu_);
  if (epoch != epoch_) return;
  if (keys_.size() >= max_keys_) keys_.clear();
  keys_[key.id] = key;
}

void KeyCache::Forget(std::string_view id) {
  MutexLock lock(&mu_);
  ++epoch_;
  keys_.erase(std::string(id));
}

}  // namespace archil
