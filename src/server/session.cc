#include "server/session.h"

#include <vector>

#include "base/coding.h"

namespace archil::server {

posix::HolderId Session::holder() const {
  return posix::HolderId(
      DecodeFixed64LE(reinterpret_cast<const char*>(identity_.holder_id.data())));
}

uint64_t Session::Attach(std::function<void(const Ending&)> close, uint32_t lane,
                         std::string peer) {
  Ending why;
  std::function<void(const Ending&)> replaced;
  uint64_t key = 0;
  {
    MutexLock lock(&mu_);
    if (closed_) {
      why = ending_;
    } else {
      key = next_key_++;
      attached_[key] = {std::move(close), std::move(peer)};
      auto [it, fresh] = lanes_.try_emplace(lane, key);
      if (!fresh) {
        if (auto old = attached_.find(it->second); old != attached_.end()) {
          replaced = std::move(old->second.close);
          attached_.erase(old);
        }
        it->second = key;
      }
    }
  }
  if (key == 0) {
    close(why);
    return 0;
  }
  if (replaced) replaced({"another connection bound this session's lane", false});
  return key;
}

void Session::Detach(uint64_t key) {
  MutexLock lock(&mu_);
  attached_.erase(key);
  for (auto it = lanes_.begin(); it != lanes_.end(); ++it) {
    if (it->second == key) {
      lanes_.erase(it);
      break;
    }
  }
}

size_t Session::connections() const {
  MutexLock lock(&mu_);
  return attached_.size();
}

std::vector<std::string> Session::Peers() const {
  MutexLock lock(&mu_);
  std::vector<std::string> out;
  out.reserve(attached_.size());
  for (const auto& [key, a] : attached_) out.push_back(a.peer);
  return out;
}

void Session::Close(const Ending& why) {
  std::vector<std::function<void(const Ending&)>> closers;
  {
    MutexLock lock(&mu_);
    if (!closed_) ending_ = why;
    closed_ = true;
    for (auto& [key, a] : attached_) closers.push_back(std::move(a.close));
    attached_.clear();
  }
  for (auto& fn : closers) fn(why);
}

bool Session::closed() const {
  MutexLock lock(&mu_);
  return closed_;
}

}  // namespace archil::server
