#include "engine/lineage/lineage.h"

namespace archil::engine {

void Lineages::Add(DiskNo disk, const DiskLineage& lineage) {
  MutexLock lock(&mu_);
  disks_[disk.value()] = lineage;
}

void Lineages::Remove(DiskNo disk) {
  MutexLock lock(&mu_);
  disks_.erase(disk.value());
  // A cached walk may end at this disk; the disk is gone only when nothing reads through it, but
  // keep the cache exact anyway.
  for (auto it = walks_.begin(); it != walks_.end();) {
    if (it->first.first == disk.value() || (it->second && it->second->disk == disk)) {
      it = walks_.erase(it);
    } else {
      ++it;
    }
  }
}

std::optional<DiskLineage> Lineages::Get(DiskNo disk) const {
  MutexLock lock(&mu_);
  auto it = disks_.find(disk.value());
  if (it == disks_.end()) return std::nullopt;
  return it->second;
}

size_t Lineages::Children(DiskNo disk) const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [d, l] : disks_) n += l.parent == disk ? 1 : 0;
  return n;
}

std::optional<std::optional<LevelRef>> Lineages::CachedWalk(DiskNo disk, Ino ino) const {
  MutexLock lock(&mu_);
  auto it = walks_.find({disk.value(), ino.value()});
  if (it == walks_.end()) return std::nullopt;
  return it->second;
}

void Lineages::CacheWalk(DiskNo disk, Ino ino, std::optional<LevelRef> next) {
  MutexLock lock(&mu_);
  if (walks_.size() >= kMaxCachedWalks) walks_.clear();
  walks_[{disk.value(), ino.value()}] = next;
}

}  // namespace archil::engine
