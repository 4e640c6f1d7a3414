#include "client/ino_pool.h"

#include "base/log.h"

namespace archil::client {

std::optional<posix::Ino> InoPool::Take() {
  MutexLock lock(&mu_);
  while (!held_.empty() && held_.front().next == held_.front().end) held_.pop_front();
  if (held_.empty() && !Refill()) return std::nullopt;
  Held& h = held_.front();
  const posix::Ino ino(h.next++);
  // Half of the last range used: ask for the next one now (the server keeps the one in use).
  if (held_.size() == 1 && (h.end - h.next) * 2 < count_) (void)Refill();
  return ino;
}

bool InoPool::Refill() {
  Result<Range> r = grant_(count_);
  if (!r.ok()) {
    ARCHIL_LOG(kWarn) << "disk client: no inode numbers granted (creates go to the server): "
                      << r.status().ToString();
    return false;
  }
  if (r->count == 0 || r->first == 0 || r->first + r->count < r->first) {
    ARCHIL_LOG(kWarn) << "disk client: the server granted an invalid range of inode numbers";
    return false;
  }
  held_.push_back(Held{r->first, r->first + r->count});
  granted_ += r->count;
  return true;
}

void InoPool::Reset() {
  MutexLock lock(&mu_);
  held_.clear();
}

uint64_t InoPool::granted() const {
  MutexLock lock(&mu_);
  return granted_;
}

}  // namespace archil::client
