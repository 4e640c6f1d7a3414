#include "fs/listing_ends.h"

namespace archil::fs {

void ListingEnds::Ended(posix::Ino dir, uint64_t offset, uint64_t changes) {
  MutexLock lock(&mu_);
  if (Changes() != changes) return;
  if (ends_.size() >= max_dirs_) ends_.clear();
  ends_[dir.value()] = End{offset, changes};
}

bool ListingEnds::TakeEnd(posix::Ino dir, uint64_t offset) {
  MutexLock lock(&mu_);
  auto it = ends_.find(dir.value());
  if (it == ends_.end()) return false;
  const End end = it->second;
  ends_.erase(it);
  return end.offset == offset && end.changes == Changes();
}

}  // namespace archil::fs
