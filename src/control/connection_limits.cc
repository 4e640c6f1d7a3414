#include "control/connection_limits.h"

#include "base/address_key.h"

namespace archil {

ConnectionLimits::Slot::~Slot() { limits_->Release(key_, seq_); }

void ConnectionLimits::Slot::OnEvict(std::function<void()> evict) {
  MutexLock lock(&limits_->mu_);
  auto it = limits_->unproven_.find(seq_);
  if (it != limits_->unproven_.end()) it->second.evict = std::move(evict);
}

void ConnectionLimits::Slot::Proven() {
  MutexLock lock(&limits_->mu_);
  limits_->unproven_.erase(seq_);
}

std::unique_ptr<ConnectionLimits::Slot> ConnectionLimits::Acquire(const std::string& peer) {
  std::string key = AddressKey(peer);
  std::function<void()> evict;
  std::unique_ptr<Slot> slot;
  {
    MutexLock lock(&mu_);
    auto mine = per_peer_.find(key);
    if (mine != per_peer_.end() && mine->second >= max_per_peer_) return nullptr;
    if (total_ >= max_total_ || unproven_.size() >= max_unproven_) {
      // The oldest unproven connection makes room (it counts until it has closed).
      auto oldest = unproven_.begin();
      if (oldest == unproven_.end()) return nullptr;  // all proven: the total holds
      evict = std::move(oldest->second.evict);
      unproven_.erase(oldest);
      ++evicted_;
    }
    ++per_peer_[key];
    ++total_;
    const uint64_t seq = next_seq_++;
    unproven_[seq] = Unproven{};
    slot = std::make_unique<Slot>(this, std::move(key), seq);
  }
  if (evict) evict();
  return slot;
}

void ConnectionLimits::Release(const std::string& key, uint64_t seq) {
  MutexLock lock(&mu_);
  --total_;
  unproven_.erase(seq);
  auto it = per_peer_.find(key);
  if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
}

size_t ConnectionLimits::total() const {
  MutexLock lock(&mu_);
  return total_;
}

size_t ConnectionLimits::unproven() const {
  MutexLock lock(&mu_);
  return unproven_.size();
}

uint64_t ConnectionLimits::evicted() const {
  MutexLock lock(&mu_);
  return evicted_;
}

}  // namespace archil
