#include "client/dir_attrs.h"

#include <sys/stat.h>

namespace archil::client {

uint64_t DirAttrs::Changing(posix::Ino ino) {
  MutexLock lock(&mu_);
  if (entries_.size() >= max_inodes_) DropIdle();
  Entry& e = entries_[ino.value()];
  e.ticket = ++next_ticket_;
  ++e.in_flight;
  e.attr.reset();
  // Sent while another change is in flight: the server may apply the two in either order, so
  // neither answer is known to be the last state (ticket 0 keeps nothing).
  return e.in_flight == 1 ? e.ticket : 0;
}

void DirAttrs::Changed(posix::Ino ino, uint64_t ticket, const std::optional<posix::Attr>& after) {
  MutexLock lock(&mu_);
  auto it = entries_.find(ino.value());
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.in_flight > 0) --e.in_flight;
  // Kept only if this change was alone from its sending (ticket != 0) to its answer (no later
  // ticket), and the answer is about `ino` (a server's reply is input, checked like any other).
  if (ticket != 0 && e.ticket == ticket && e.in_flight == 0 && after && after->ino == ino) {
    e.attr = after;
  }
  if (e.in_flight == 0 && !e.attr) entries_.erase(it);
}

void DirAttrs::Created(const posix::Attr& attr) {
  if (!S_ISDIR(attr.mode)) return;
  MutexLock lock(&mu_);
  if (entries_.size() >= max_inodes_) DropIdle();
  auto [it, inserted] = entries_.try_emplace(attr.ino.value());
  if (!inserted) return;
  it->second.ticket = ++next_ticket_;
  it->second.attr = attr;
}

void DirAttrs::Forget(posix::Ino ino) {
  MutexLock lock(&mu_);
  auto it = entries_.find(ino.value());
  if (it == entries_.end()) return;
  if (it->second.in_flight == 0) {
    entries_.erase(it);
    return;
  }
  // Changes still in flight: none of them may keep what it answers.
  it->second.ticket = ++next_ticket_;
  it->second.attr.reset();
}

std::optional<posix::Attr> DirAttrs::Touch(posix::Ino ino, posix::Timespec time, int links) {
  MutexLock lock(&mu_);
  auto it = entries_.find(ino.value());
  if (it == entries_.end()) return std::nullopt;
  Entry& e = it->second;
  if (e.in_flight != 0 || !e.attr) {
    e.ticket = ++next_ticket_;  // a change in flight must not keep what it answers either
    e.attr.reset();
    if (e.in_flight == 0) entries_.erase(it);
    return std::nullopt;
  }
  e.attr->mtime = e.attr->ctime = time;
  e.attr->nlink = static_cast<uint32_t>(static_cast<int64_t>(e.attr->nlink) + links);
  return e.attr;
}

std::optional<posix::Attr> DirAttrs::Get(posix::Ino ino) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(ino.value());
  if (it == entries_.end()) return std::nullopt;
  return it->second.attr;
}

size_t DirAttrs::size() const {
  MutexLock lock(&mu_);
  return entries_.size();
}

void DirAttrs::DropIdle() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = it->second.in_flight == 0 ? entries_.erase(it) : std::next(it);
  }
}

}  // namespace archil::client
