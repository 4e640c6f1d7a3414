#include "fs/last_names.h"

#include <sys/stat.h>

namespace archil::fs {

uint64_t LastNames::Generation() const {
  MutexLock lock(&mu_);
  return generation_;
}

void LastNames::Erase(const std::string& key) {
  auto it = names_.find(key);
  if (it == names_.end()) return;
  keys_.erase(it->second.ino.value());
  names_.erase(it);
}

void LastNames::Saw(posix::Ino dir, std::string_view name, const posix::Attr& attr,
                    uint64_t generation) {
  MutexLock lock(&mu_);
  if (generation != generation_) return;
  std::string key = posix::NameKey(dir, name);
  Erase(key);
  const bool is_dir = S_ISDIR(attr.mode);
  if (!is_dir && attr.nlink != 1) return;
  // Its one name: an entry under another name is out of date.
  if (auto old = keys_.find(attr.ino.value()); old != keys_.end()) Erase(std::string(old->second));
  if (names_.size() >= max_names_) {
    names_.clear();
    keys_.clear();
  }
  keys_[attr.ino.value()] = key;
  names_[std::move(key)] = Named{attr.ino, is_dir};
}

void LastNames::Forget(posix::Ino dir, std::string_view name) {
  MutexLock lock(&mu_);
  Erase(posix::NameKey(dir, name));
}

void LastNames::Moved(posix::Ino dir, std::string_view name, posix::Ino new_dir,
                      std::string_view new_name) {
  MutexLock lock(&mu_);
  std::string target = posix::NameKey(new_dir, new_name);
  Erase(target);
  auto it = names_.find(posix::NameKey(dir, name));
  if (it == names_.end()) return;
  const Named named = it->second;
  names_.erase(it);
  keys_[named.ino.value()] = target;
  names_[std::move(target)] = named;
}

void LastNames::Linking(posix::Ino ino) {
  MutexLock lock(&mu_);
  ++generation_;
  if (auto it = keys_.find(ino.value()); it != keys_.end()) Erase(std::string(it->second));
}

std::optional<LastNames::Named> LastNames::Find(posix::Ino dir, std::string_view name) const {
  MutexLock lock(&mu_);
  auto it = names_.find(posix::NameKey(dir, name));
  if (it == names_.end()) return std::nullopt;
  return it->second;
}

size_t LastNames::size() const {
  MutexLock lock(&mu_);
  return names_.size();
}

}  // namespace archil::fs
