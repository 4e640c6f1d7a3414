#include "server/request_budget.h"

#include <algorithm>

namespace archil::server {

RequestBudget::Verdict RequestBudget::TryCharge(uint64_t disk, uint64_t connection_holds,
                                                uint64_t bytes) {
  MutexLock lock(&mu_);
  if (disk != 0) {
    if (connection_holds > 0 && connection_holds + bytes > limits_.per_connection) {
      return Verdict::kOverShare;
    }
    auto it = disks_.find(disk);
    const uint64_t held = it == disks_.end() ? 0 : it->second;
    if (held > 0 && held + bytes > limits_.per_disk) return Verdict::kOverShare;
    if (held > 0 && total_ + bytes > limits_.total) return Verdict::kOverTotal;
  }
  disks_[disk] += bytes;
  total_ += bytes;
  peak_ = std::max(peak_, total_);
  return Verdict::kAdmitted;
}

uint64_t RequestBudget::discharges() const {
  MutexLock lock(&mu_);
  return discharges_;
}

void RequestBudget::Discharge(uint64_t disk, uint64_t bytes) {
  MutexLock lock(&mu_);
  ++discharges_;
  auto it = disks_.find(disk);
  if (it == disks_.end()) return;
  const uint64_t n = std::min(bytes, it->second);
  it->second -= n;
  total_ -= std::min(total_, n);
  if (it->second == 0) disks_.erase(it);
}

uint64_t RequestBudget::Room(uint64_t disk) const {
  MutexLock lock(&mu_);
  auto it = disks_.find(disk);
  if (it == disks_.end()) return UINT64_MAX;
  const uint64_t by_disk = limits_.per_disk - std::min(limits_.per_disk, it->second);
  const uint64_t by_total = limits_.total - std::min(limits_.total, total_);
  return std::min(by_disk, by_total);
}

uint64_t RequestBudget::TotalRoom() const {
  MutexLock lock(&mu_);
  return limits_.total - std::min(limits_.total, total_);
}

uint64_t RequestBudget::total() const {
  MutexLock lock(&mu_);
  return total_;
}

uint64_t RequestBudget::peak() const {
  MutexLock lock(&mu_);
  return peak_;
}

uint64_t RequestBudget::of_disk(uint64_t disk) const {
  MutexLock lock(&mu_);
  auto it = disks_.find(disk);
  return it == disks_.end() ? 0 : it->second;
}

}  // namespace archil::server
