#include "engine/fs/epoch_table.h"

namespace archil::engine {

void EpochTable::Restore(Epoch open, std::map<uint64_t, EpochRecord> frozen) {
  MutexLock lock(&mu_);
  open_ = open;
  frozen_ = std::move(frozen);
}

EpochTable::Now EpochTable::Current() const {
  MutexLock lock(&mu_);
  Now now{open_, false};
  for (const auto& [e, r] : frozen_) {
    if (r.pinned()) {
      now.any_pinned = true;
      break;
    }
  }
  return now;
}

void EpochTable::Freeze(Epoch e, const EpochRecord& r) {
  MutexLock lock(&mu_);
  open_ = Epoch(e.value() + 1);
  frozen_[e.value()] = r;
}

void EpochTable::Unfreeze(Epoch e) {
  MutexLock lock(&mu_);
  open_ = e;
  frozen_.erase(e.value());
}

std::optional<EpochRecord> EpochTable::Set(Epoch e, const EpochRecord& r) {
  MutexLock lock(&mu_);
  auto [it, inserted] = frozen_.try_emplace(e.value(), r);
  if (inserted) return std::nullopt;
  std::optional<EpochRecord> previous = std::move(it->second);
  it->second = r;
  return previous;
}

void EpochTable::PutBack(Epoch e, const std::optional<EpochRecord>& previous) {
  MutexLock lock(&mu_);
  if (previous) {
    frozen_[e.value()] = *previous;
  } else {
    frozen_.erase(e.value());
  }
}

void EpochTable::ForgetIfUnpinned(Epoch e) {
  MutexLock lock(&mu_);
  auto it = frozen_.find(e.value());
  if (it != frozen_.end() && !it->second.pinned()) frozen_.erase(it);
}

bool EpochTable::PinnedIn(Epoch lo, Epoch hi) const {
  MutexLock lock(&mu_);
  for (auto it = frozen_.lower_bound(lo.value()); it != frozen_.end() && it->first <= hi.value();
       ++it) {
    if (it->second.pinned()) return true;
  }
  return false;
}

EpochTable::Neighbours EpochTable::PinnedNeighbours(Epoch k) const {
  MutexLock lock(&mu_);
  Neighbours n;
  n.next = open_.value();
  for (const auto& [e, r] : frozen_) {
    if (!r.pinned() || e == k.value()) continue;
    if (e < k.value()) n.prev = e;
    if (e > k.value()) {
      n.next = e;
      break;
    }
  }
  return n;
}

std::optional<Epoch> EpochTable::CheckpointNamed(std::string_view name) const {
  MutexLock lock(&mu_);
  for (const auto& [e, r] : frozen_) {
    if (r.state == EpochState::kCheckpoint && r.checkpoint_name == name) return Epoch(e);
  }
  return std::nullopt;
}

std::vector<CheckpointInfo> EpochTable::Checkpoints() const {
  MutexLock lock(&mu_);
  std::vector<CheckpointInfo> out;
  for (const auto& [e, r] : frozen_) {
    if (r.state == EpochState::kCheckpoint)
      out.push_back({r.checkpoint_name, Epoch(e), r.frozen_at});
  }
  return out;
}

std::vector<Epoch> EpochTable::ReleasedUnpinned() const {
  MutexLock lock(&mu_);
  std::vector<Epoch> out;
  for (const auto& [e, r] : frozen_) {
    if (r.state == EpochState::kReleased && !r.pinned()) out.emplace_back(e);
  }
  return out;
}

}  // namespace archil::engine
