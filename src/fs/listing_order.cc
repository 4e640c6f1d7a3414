#include "fs/listing_order.h"

#include <algorithm>

namespace archil::fs {

void ListingOrder::Listed(posix::Ino dir, uint64_t offset, const std::vector<Entry>& page) {
  MutexLock lock(&mu_);
  auto it = dirs_.find(dir.value());
  if (offset == 0) {
    if (it != dirs_.end()) Forget(dir.value(), &it->second);
    it = dirs_.try_emplace(dir.value()).first;
  } else if (it == dirs_.end() || it->second.end != offset) {
    return;  // a page of a listing not recorded from its start, or of another reader's
  }
  Listing& l = it->second;
  for (const Entry& e : page) {
    l.end = e.offset;
    if (!e.file) continue;
    if (entries_ >= limits_.max_entries) {
      dirs_.clear();
      places_.clear();
      entries_ = 0;
      return;
    }
    places_[e.what.ino.value()] = Place{dir.value(), l.files.size()};
    l.files.push_back(e.what);
    ++entries_;
  }
}

std::vector<ListingOrder::File> ListingOrder::Began(posix::Ino ino) {
  MutexLock lock(&mu_);
  auto at = places_.find(ino.value());
  if (at == places_.end()) return {};
  auto it = dirs_.find(at->second.dir);
  if (it == dirs_.end()) return {};
  Listing& l = it->second;
  const size_t i = at->second.index;
  if (i >= l.files.size() || l.files[i].ino != ino) return {};
  // Empty files between the last one begun and this one were read without a READ.
  bool in_order = i >= l.next && i - l.next <= limits_.files_ahead;
  for (size_t k = l.next; in_order && k < i; ++k) in_order = l.files[k].size == 0;
  l.next = i + 1;
  if (!in_order) return {};

  // The window runs from the file after this one: what earlier calls returned in it counts.
  uint64_t bytes = 0;
  size_t j = i + 1;
  for (; j < std::max(l.ahead_end, i + 1); ++j) {
    const uint64_t size = l.files[j].size;
    if (size != 0 && size <= limits_.max_file_bytes) bytes += size;
  }
  std::vector<File> out;
  const size_t last = std::min(l.files.size(), i + 1 + limits_.files_ahead);
  for (; j < last; ++j) {
    const File& f = l.files[j];
    if (f.size == 0 || f.size > limits_.max_file_bytes) continue;
    if (bytes + f.size > limits_.bytes_ahead) break;
    bytes += f.size;
    out.push_back(f);
  }
  l.ahead_end = std::max(l.ahead_end, j);
  return out;
}

size_t ListingOrder::entries() const {
  MutexLock lock(&mu_);
  return entries_;
}

void ListingOrder::Forget(uint64_t dir, Listing* listing) {
  for (const File& f : listing->files) {
    auto at = places_.find(f.ino.value());
    if (at != places_.end() && at->second.dir == dir) places_.erase(at);
  }
  entries_ -= listing->files.size();
  listing->files.clear();
}

}  // namespace archil::fs
