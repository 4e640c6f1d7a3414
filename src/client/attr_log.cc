#include "client/attr_log.h"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

namespace archil::client {

namespace {

constexpr uint64_t kDataBlock = 4096;  // the engine's block (formats.md), for st_blocks

// The changes `puts` carries, as counted carried and lost: one per put and remove (a file's create
// has its put), one per directory created (which has none).
uint64_t Changes(const posix::Puts& puts) {
  const auto dirs = std::count_if(puts.creates.begin(), puts.creates.end(),
                                  [](const posix::CreatePut& c) { return S_ISDIR(c.mode); });
  return puts.attrs.size() + puts.removes.size() + static_cast<uint64_t>(dirs);
}

}  // namespace

AttrLog::Ticket AttrLog::Begin() {
  MutexLock lock(&mu_);
  while (carrier_in_flight_) carrier_done_.Wait(&mu_);
  Ticket t;
  t.id = ++next_id_;
  t.alone_at_start = in_flight_ == 0;
  ++in_flight_;
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& e = it->second;
    if (e.state == State::kKnown) {
      it = entries_.erase(it);  // this mutation may change it
      continue;
    }
    // No carrier is in flight, so nothing is carried: every put left is pending.
    e.state = State::kCarried;
    if (e.create) {
      t.puts.creates.push_back(std::move(*e.create));
      e.create.reset();
    }
    if (!e.data.empty()) {
      t.puts.writes.push_back(posix::WritePut{e.put.ino, e.data_offset, std::move(e.data)});
      e.data.clear();
    }
    // A directory created here carries no put: the creates in it that follow set its times.
    if (!e.dir) t.puts.attrs.push_back(e.put);
    ++it;
  }
  // The server takes a range's numbers in increasing order (protocol.md §5.3.3); the pool handed
  // them out so, and the creates are of files, independent of one another.
  std::sort(t.puts.creates.begin(), t.puts.creates.end(),
            [](const posix::CreatePut& a, const posix::CreatePut& b) { return a.ino < b.ino; });
  t.puts.removes = std::move(removes_);
  removes_.clear();
  if (!t.puts.empty()) {
    carrier_in_flight_ = true;
    counts_.carried += Changes(t.puts);
    pending_ = 0;
    pending_bytes_ = 0;
    pending_writes_ = 0;
    pending_creates_ = 0;
    oldest_pending_ns_ = 0;
  }
  return t;
}

void AttrLog::Held(Entry& e) {
  if (e.unsent_in == 0) return;
  auto it = unsent_in_.find(e.unsent_in);
  if (it != unsent_in_.end() && --it->second == 0) unsent_in_.erase(it);
  e.unsent_in = 0;
}

void AttrLog::End(Ticket ticket, bool puts_applied, const std::optional<posix::Attr>& learned,
                  bool only_puts) {
  MutexLock lock(&mu_);
  const bool alone = ticket.alone_at_start && in_flight_ == 1 && next_id_ == ticket.id;
  --in_flight_;
  if (!ticket.puts.empty()) {
    // The server holds them now (or never will): an answer to a read is the truth again, unless
    // nothing else could have changed them (a lone PUT_ATTRS that applied). Nothing was answered
    // here meanwhile (a mutation was in flight), so every carried entry is ours.
    const bool keep = alone && only_puts && puts_applied;
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.state != State::kCarried) {
        ++it;
        continue;
      }
      Held(it->second);  // or never will: a read asks the server either way
      if (keep && !it->second.dir) {
        it->second.state = State::kKnown;
        ++it;
      } else {
        it = entries_.erase(it);
      }
    }
    if (!puts_applied) counts_.lost += Changes(ticket.puts);
    // Every remove answered here was carried by this mutation: none is answered while one is in
    // flight.
    if (!ticket.puts.removes.empty()) {
      removing_.clear();
      removing_in_.clear();
    }
    carrier_in_flight_ = false;
    carrier_done_.SignalAll();
  }
  // A directory's attributes are DirAttrs' (client/dir_attrs.h), which a create answered here in
  // it changes; kept here too, they would go stale.
  if (alone && learned && !S_ISDIR(learned->mode)) {
    entries_[learned->ino.value()] = Entry{*learned, State::kKnown, {}};
  }
}

std::optional<posix::Attr> AttrLog::Answer(posix::Ino ino, const posix::SetAttrRequest& r,
                                           posix::Timespec now, int64_t now_ns) {
  if (r.size) return std::nullopt;
  MutexLock lock(&mu_);
  if (in_flight_ != 0) return std::nullopt;
  auto it = entries_.find(ino.value());
  // A directory's attributes are not kept here (Get): its SETATTR goes to the server.
  if (it == entries_.end() || it->second.dir) return std::nullopt;
  Entry& e = it->second;
  Pend(ino, e, now_ns);
  posix::Attr& a = e.attr;
  posix::AttrPut& p = e.put;
  if (r.mode) a.mode = (a.mode & S_IFMT) | (*r.mode & 07777), p.mode = *r.mode & 07777;
  if (r.uid) a.uid = *r.uid, p.uid = *r.uid;
  if (r.gid) a.gid = *r.gid, p.gid = *r.gid;
  using K = posix::TimeUpdate::Kind;
  if (r.atime.kind != K::kOmit) {
    a.atime = r.atime.kind == K::kNow ? now : r.atime.value;
    p.atime = a.atime;
  }
  if (r.mtime.kind != K::kOmit) {
    a.mtime = r.mtime.kind == K::kNow ? now : r.mtime.value;
    p.mtime = a.mtime;
  }
  a.ctime = p.ctime = now;
  ++counts_.answered;
  return a;
}

void AttrLog::Pend(posix::Ino ino, Entry& e, int64_t now_ns) {
  if (e.state == State::kPending) return;
  e.state = State::kPending;
  e.put = posix::AttrPut{.ino = ino};
  if (pending_++ == 0) oldest_pending_ns_ = now_ns;
}

std::optional<posix::Attr> AttrLog::AnswerWrite(posix::Ino ino, uint64_t offset,
                                                std::string_view data, size_t max_bytes,
                                                posix::Timespec now, int64_t now_ns) {
  if (data.empty()) return std::nullopt;
  MutexLock lock(&mu_);
  if (in_flight_ != 0) return std::nullopt;
  auto it = entries_.find(ino.value());
  if (it == entries_.end()) return std::nullopt;
  Entry& e = it->second;
  posix::Attr& a = e.attr;
  // Dense: the file's blocks are exactly those up to its size, so the blocks after this append
  // are known too (the engine's 4 KiB blocks, counted in 512-byte units).
  auto blocks_for = [](uint64_t size) { return (size + kDataBlock - 1) / kDataBlock * 8; };
  if (!S_ISREG(a.mode) || offset != a.size || a.blocks != blocks_for(a.size) ||
      e.data.size() + data.size() > max_bytes || data.size() > posix::kMaxFileSize - offset ||
      pending_bytes_ + data.size() > kMaxBytes ||
      (e.data.empty() && pending_writes_ >= kMaxWrites)) {
    return std::nullopt;
  }
  Pend(ino, e, now_ns);
  if (e.data.empty()) {
    e.data_offset = offset;
    ++pending_writes_;
  }
  e.data.append(data);
  pending_bytes_ += data.size();
  a.size = offset + data.size();
  a.blocks = blocks_for(a.size);
  // As the engine: a write drops set-user-ID, and set-group-ID when group-execute is set.
  const uint32_t dropped =
      a.mode & ~static_cast<uint32_t>(S_ISUID | ((a.mode & S_IXGRP) ? S_ISGID : 0));
  if (dropped != a.mode) a.mode = dropped, e.put.mode = dropped & 07777;
  a.mtime = a.ctime = now;
  e.put.mtime = e.put.ctime = now;
  ++counts_.answered_writes;
  return a;
}

bool AttrLog::AnswerCreate(const posix::CreatePut& create, const posix::Attr& attr,
                           int64_t now_ns) {
  MutexLock lock(&mu_);
  if (in_flight_ != 0 || pending_creates_ >= kMaxCreates) return false;
  // Its remove waits: applied after the create, it would remove the new file.
  if (removing_.count(posix::NameKey(create.parent, create.name)) > 0) return false;
  auto [it, inserted] = entries_.try_emplace(create.ino.value());
  if (!inserted) return false;  // a number the server granted twice: not ours to answer
  Entry& e = it->second;
  e.attr = attr;
  e.dir = S_ISDIR(attr.mode);
  Pend(create.ino, e, now_ns);
  e.put.ctime = create.time;  // the create's own: applying it changes nothing
  e.create = create;
  e.unsent_in = create.parent.value();
  ++unsent_in_[e.unsent_in];
  ++pending_creates_;
  ++counts_.answered_creates;
  return true;
}

bool AttrLog::AnswerRemove(const posix::RemovePut& remove, int64_t now_ns) {
  MutexLock lock(&mu_);
  if (in_flight_ != 0 || removes_.size() >= kMaxRemoves) return false;
  // Never carried with its own create: a retry of both could not tell the number it used from a
  // misused one (protocol.md §5.3.2).
  auto it = entries_.find(remove.ino.value());
  if (it != entries_.end() && it->second.create) return false;
  removing_.insert(posix::NameKey(remove.parent, remove.name));
  ++removing_in_[remove.parent.value()];
  removes_.push_back(remove);
  if (pending_++ == 0) oldest_pending_ns_ = now_ns;
  ++counts_.answered_removes;
  return true;
}

bool AttrLog::Unsent(posix::Ino ino) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(ino.value());
  return it != entries_.end() && (it->second.unsent_in != 0 || !it->second.data.empty());
}

bool AttrLog::UnsentIn(posix::Ino dir, std::optional<std::string_view> name) const {
  MutexLock lock(&mu_);
  if (unsent_in_.count(dir.value()) > 0) return true;
  return name ? removing_.count(posix::NameKey(dir, *name)) > 0
              : removing_in_.count(dir.value()) > 0;
}

void AttrLog::AwaitCarrier() const {
  MutexLock lock(&mu_);
  while (carrier_in_flight_) carrier_done_.Wait(&mu_);
}

std::optional<posix::Attr> AttrLog::Get(posix::Ino ino) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(ino.value());
  if (it == entries_.end() || it->second.dir) return std::nullopt;
  return it->second.attr;
}

void AttrLog::Overlay(posix::Attr* a) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(a->ino.value());
  if (it != entries_.end() && it->second.state != State::kKnown && !it->second.dir) {
    *a = it->second.attr;
  }
}

AttrLog::Stats AttrLog::stats() const {
  MutexLock lock(&mu_);
  Stats s = counts_;
  s.pending = pending_;
  s.pending_bytes = pending_bytes_;
  s.pending_creates = pending_creates_;
  s.pending_removes = removes_.size();
  s.oldest_pending_ns = oldest_pending_ns_;
  return s;
}

}  // namespace archil::client
