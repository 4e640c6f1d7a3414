// The DiskServer's flow control (request_budget.h): a connection whose next frame does not fit its
// disk's or the server's share of buffered request bytes stops being read, waits in a queue by
// what it starved for, and is read again once discharged bytes make room for it. The reactor
// that calls them is disk_server.cc.
#include <poll.h>
#include <sys/epoll.h>

#include <algorithm>

#include "base/log.h"
#include "server/disk_server.h"

namespace archil::server {

void DiskServer::Discharge(Charge charge) {
  if (charge.bytes == 0) return;
  budget_.Discharge(charge.disk, charge.bytes);
  MutexLock lock(&resume_mu_);
  bool woke = false;
  if (auto it = starved_by_disk_.find(charge.disk); it != starved_by_disk_.end()) {
    const uint64_t room = budget_.Room(charge.disk);
    // A disk that holds nothing gets its next frame in whatever its size (request_budget.h).
    woke |= ResumeWhatFits(&it->second, room == UINT64_MAX ? budget_.limits().per_disk : room,
                           room == UINT64_MAX);
    if (it->second.empty()) starved_by_disk_.erase(it);
  }
  if (!starved_for_total_.empty()) {
    woke |= ResumeWhatFits(&starved_for_total_, budget_.TotalRoom(), false);
  }
  if (woke) Wake();
}

bool DiskServer::ResumeWhatFits(std::deque<Starved>* q, uint64_t room, bool first_regardless) {
  bool moved = false;
  while (!q->empty() && (q->front().bytes <= room || (first_regardless && !moved))) {
    room -= std::min(room, q->front().bytes);
    resume_.push_back(std::move(q->front().conn));
    q->pop_front();
    moved = true;
  }
  return moved;
}

void DiskServer::PauseReading(const ConnPtr& c) {
  c->reading_paused = true;
  epoll_event ev{};
  ev.events = EPOLLRDHUP;
  ev.data.fd = c->fd();
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, c->fd(), &ev);
}

void DiskServer::Starve(const ConnPtr& c, RequestBudget::Verdict verdict, uint64_t bytes,
                        uint64_t seen) {
  PauseReading(c);
  ++starved_count_;
  MutexLock lock(&resume_mu_);
  // A discharge between the refusal and now found nobody to wake: try again at once.
  if (budget_.discharges() != seen) {
    resume_.push_back(c);
    Wake();
    return;
  }
  if (verdict == RequestBudget::Verdict::kOverTotal) {
    starved_for_total_.push_back(Starved{c, bytes});
  } else {
    starved_by_disk_[c->budget_disk].push_back(Starved{c, bytes});
  }
}

void DiskServer::ResumeReading(const ConnPtr& c) {
  if (!c->reading_paused) return;
  if (auto it = conns_.find(c->fd()); it == conns_.end() || it->second != c) return;
  // A peer that hung up while it waited is closed, not read: its frame can no longer be answered,
  // and reading what its socket still holds (up to a whole frame) would only burn CPU.
  pollfd p{c->fd(), POLLRDHUP, 0};
  if (::poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
    ARCHIL_LOG(kDebug) << "server: " << c->peer() << ": hung up while paused; closing";
    Close(c);
    return;
  }
  c->reading_paused = false;
  ++resumed_count_;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = c->fd();
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, c->fd(), &ev);
  // Its waiting frame is tried again at once (epoll may have nothing new to report).
  again_.push_back(c);
}

}  // namespace archil::server
