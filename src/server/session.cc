#include "server/session.h"

#include <vector>

#include "base/coding.h"

namespace archil::server {

posix::HolderId Session::holder() const {
  return posix::HolderId(
      DecodeFixed64LE(reinterpret_cast<const char*>(identity_.holder_id.data())));
}

uint64_t Session::Attach(std::function<void(const Ending&)> close) {
  Ending why;
  {
    MutexLock lock(&mu_);
    if (!closed_) {
      closers_[next_key_] = std::move(close);
      return next_key_++;
    }
    why = ending_;
  }
  close(why);
  return 0;
}

void Session::Detach(uint64_t key) {
  MutexLock lock(&mu_);
  closers_.erase(key);
}

size_t Session::connections() const {
  MutexLock lock(&mu_);
  return closers_.size();
}

void Session::Close(const Ending& why) {
  std::vector<std::function<void(const Ending&)>> closers;
  {
    MutexLock lock(&mu_);
    if (!closed_) ending_ = why;
    closed_ = true;
    for (auto& [key, fn] : closers_) closers.push_back(std::move(fn));
    closers_.clear();
  }
  for (auto& fn : closers) fn(why);
}

bool Session::closed() const {
  MutexLock lock(&mu_);
  return closed_;
}

}  // namespace archil::server
