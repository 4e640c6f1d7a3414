#include "control/connection_limits.h"

namespace archil {

ConnectionLimits::Slot::~Slot() { limits_->Release(peer_); }

std::unique_ptr<ConnectionLimits::Slot> ConnectionLimits::Acquire(const std::string& peer) {
  MutexLock lock(&mu_);
  if (total_ >= max_total_) return nullptr;
  size_t& mine = per_peer_[peer];
  if (mine >= max_per_peer_) {
    if (mine == 0) per_peer_.erase(peer);
    return nullptr;
  }
  ++mine;
  ++total_;
  return std::make_unique<Slot>(this, peer);
}

void ConnectionLimits::Release(const std::string& peer) {
  MutexLock lock(&mu_);
  --total_;
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
}

size_t ConnectionLimits::total() const {
  MutexLock lock(&mu_);
  return total_;
}

}  // namespace archil
