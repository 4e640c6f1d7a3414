#include "engine/fs/holder_table.h"

#include <cerrno>

namespace archil::engine {

void HolderTable::Add(Ino ino, uint64_t holder) {
  MutexLock lock(&mu_);
  held_[ino.value()][holder]++;
}

Result<bool> HolderTable::Remove(Ino ino, uint64_t holder) {
  MutexLock lock(&mu_);
  auto it = held_.find(ino.value());
  if (it == held_.end() || !it->second.count(holder)) {
    return Status::Errno(EINVAL, "inode not open by this holder");
  }
  if (--it->second[holder] == 0) it->second.erase(holder);
  if (!it->second.empty()) return false;
  held_.erase(it);
  return true;
}

std::vector<Ino> HolderTable::DropHolder(uint64_t holder) {
  MutexLock lock(&mu_);
  std::vector<Ino> released;
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->second.erase(holder) && it->second.empty()) {
      released.emplace_back(it->first);
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  return released;
}

std::vector<uint64_t> HolderTable::Of(Ino ino) const {
  MutexLock lock(&mu_);
  std::vector<uint64_t> out;
  auto it = held_.find(ino.value());
  if (it != held_.end()) {
    for (const auto& [h, n] : it->second) out.push_back(h);
  }
  return out;
}

void HolderTable::Restore(Ino ino, const std::vector<uint64_t>& holders) {
  MutexLock lock(&mu_);
  for (uint64_t h : holders) held_[ino.value()][h]++;
}

}  // namespace archil::engine
