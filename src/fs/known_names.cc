#include "fs/known_names.h"

namespace archil::fs {

void KnownNames::Created(posix::Ino dir) {
  MutexLock lock(&mu_);
  dirs_.try_emplace(dir.value());
}

bool KnownNames::Adding(posix::Ino dir, std::string_view name) {
  MutexLock lock(&mu_);
  auto d = dirs_.find(dir.value());
  if (d == dirs_.end()) return false;
  auto [it, inserted] = d->second.try_emplace(std::string(name), 0);
  ++it->second;
  if (!inserted) return false;
  if (++names_ <= max_names_) return true;
  // Forgetting keeps the contract: an unknown directory sends every lookup to the disk.
  dirs_.clear();
  names_ = 0;
  return true;
}

void KnownNames::Added(posix::Ino dir, std::string_view name) {
  MutexLock lock(&mu_);
  auto d = dirs_.find(dir.value());
  if (d == dirs_.end()) return;
  auto it = d->second.find(std::string(name));
  if (it != d->second.end() && it->second > 0) --it->second;
}

void KnownNames::Removed(posix::Ino dir, std::string_view name) {
  MutexLock lock(&mu_);
  auto d = dirs_.find(dir.value());
  if (d == dirs_.end()) return;
  auto it = d->second.find(std::string(name));
  // A request in flight may be adding the name again: it stays until that one is answered and
  // the name is removed again.
  if (it == d->second.end() || it->second > 0) return;
  d->second.erase(it);
  --names_;
}

bool KnownNames::Absent(posix::Ino dir, std::string_view name) const {
  MutexLock lock(&mu_);
  auto d = dirs_.find(dir.value());
  return d != dirs_.end() && d->second.find(std::string(name)) == d->second.end();
}

bool KnownNames::Empty(posix::Ino dir) const {
  MutexLock lock(&mu_);
  auto d = dirs_.find(dir.value());
  return d != dirs_.end() && d->second.empty();
}

size_t KnownNames::dirs() const {
  MutexLock lock(&mu_);
  return dirs_.size();
}

size_t KnownNames::names() const {
  MutexLock lock(&mu_);
  return names_;
}

}  // namespace archil::fs
