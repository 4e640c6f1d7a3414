#include "fs/listing_order.h"

#include <algorithm>

namespace archil::fs {

namespace {
// How deep a walk enters subdirectories, and how many parents it follows up.
constexpr int kMaxDepth = 8;
// How far past the last file begun the next one may be, with only empty files and directories
// between them, and still be read in order.
constexpr size_t kMaxGap = 64;
// A bound on the files returned and not begun that are remembered (as returned: a reader that
// begins one is where the walk said).
constexpr size_t kMaxAhead = 1024;
}  // namespace

void ListingOrder::Listed(posix::Ino dir, uint64_t offset, const std::vector<Entry>& page,
                          bool eof) {
  MutexLock lock(&mu_);
  auto it = dirs_.find(dir.value());
  if (offset == 0) {
    if (it != dirs_.end()) {
      Forget(dir.value(), &it->second);
      dirs_.erase(it);
    }
    it = dirs_.try_emplace(dir.value()).first;
  } else if (it == dirs_.end() || it->second.complete || it->second.end != offset) {
    return;  // a page of a listing not recorded from its start, or of another reader's
  }
  Listing& l = it->second;
  for (const Entry& e : page) {
    l.end = e.offset;
    if (e.kind == Kind::kOther) continue;
    if (entries_ >= limits_.max_entries) {
      dirs_.clear();
      places_.clear();
      entries_ = 0;
      ahead_.clear();
      NewWindow();
      return;
    }
    places_[e.ino.value()] = Place{dir.value(), l.items.size()};
    l.items.push_back(Item{e.ino, e.size, e.kind == Kind::kDir});
    ++entries_;
  }
  l.complete = eof;
}

std::vector<ListingOrder::File> ListingOrder::Began(posix::Ino ino) {
  MutexLock lock(&mu_);
  bool predicted = false;
  if (auto ahead = ahead_.find(ino.value()); ahead != ahead_.end()) {
    if (ahead->second.window == window_) {
      --window_files_;
      window_bytes_ -= ahead->second.size;
    }
    ahead_.erase(ahead);
    predicted = true;
  }
  auto at = places_.find(ino.value());
  auto it = at != places_.end() ? dirs_.find(at->second.dir) : dirs_.end();
  if (it == dirs_.end()) {
    NewWindow();  // a file no listing recorded: the reader went elsewhere
    return {};
  }
  const Place place = at->second;
  Listing& l = it->second;
  const size_t i = place.index;
  if (i >= l.items.size() || l.items[i].ino != ino || l.items[i].dir) return {};
  bool in_order = i >= l.next && i - l.next <= kMaxGap;
  for (size_t k = l.next; in_order && k < i; ++k) {
    in_order = l.items[k].dir || l.items[k].size == 0;
  }
  l.next = i + 1;
  // The reader went where the order did not say: out of order, or to a file the walk would have
  // returned and did not (a directory listed after the walk passed it).
  if (!in_order || (!predicted && l.items[i].size <= limits_.max_file_bytes)) NewWindow();
  if (!in_order) return {};

  Budget budget{limits_.files_ahead - std::min(limits_.files_ahead, window_files_),
                limits_.bytes_ahead - std::min(limits_.bytes_ahead, window_bytes_)};
  std::vector<File> out;
  // The rest of this directory depth first, then up through the parents whose walk it ends.
  uint64_t dir = place.dir;
  size_t from = i + 1;
  for (int up = 0; up < kMaxDepth && budget.files > 0; ++up) {
    if (!Collect(dir, from, 0, &budget, &out)) break;
    auto parent = places_.find(dir);
    if (parent == places_.end()) break;
    dir = parent->second.dir;
    from = parent->second.index + 1;
  }
  if (ahead_.size() + out.size() > kMaxAhead) {  // readers that went elsewhere
    ahead_.clear();
    NewWindow();
  }
  for (const File& f : out) {
    ahead_[f.ino.value()] = Ahead{f.size, window_};
    ++window_files_;
    window_bytes_ += f.size;
  }
  return out;
}

bool ListingOrder::Collect(uint64_t dir, size_t from, int depth, Budget* budget,
                           std::vector<File>* out) {
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return false;
  Listing& l = it->second;
  size_t j = std::max(from, l.ahead_end);
  for (; j < l.items.size(); ++j) {
    const Item& e = l.items[j];
    if (e.dir) {
      // A subdirectory not listed yet is passed: its files are read ahead once it is.
      if (depth + 1 < kMaxDepth && dirs_.contains(e.ino.value()) &&
          !Collect(e.ino.value(), 0, depth + 1, budget, out)) {
        break;  // its walk did not end: what follows it here waits
      }
      continue;
    }
    if (e.size == 0 || e.size > limits_.max_file_bytes) continue;
    if (budget->files == 0 || e.size > budget->bytes) break;
    --budget->files;
    budget->bytes -= e.size;
    out->push_back(File{e.ino, e.size});
  }
  l.ahead_end = std::max(l.ahead_end, j);
  return j == l.items.size() && l.complete;
}

size_t ListingOrder::entries() const {
  MutexLock lock(&mu_);
  return entries_;
}

void ListingOrder::Forget(uint64_t dir, Listing* listing) {
  for (const Item& item : listing->items) {
    auto at = places_.find(item.ino.value());
    if (at != places_.end() && at->second.dir == dir) places_.erase(at);
  }
  entries_ -= listing->items.size();
  listing->items.clear();
}

void ListingOrder::NewWindow() {
  ++window_;
  window_files_ = 0;
  window_bytes_ = 0;
}

}  // namespace archil::fs
