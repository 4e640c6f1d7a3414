#include "server/inode_order.h"

#include <algorithm>
#include <utility>

namespace archil::server {

using proto::As;

std::vector<uint64_t> MutationKeys(uint16_t type, const proto::Message& m) {
  switch (type) {
    case proto::kTypeWrite:
      return {As<v1::Write>(m).ino()};
    case proto::kTypeSetAttr:
      return {As<v1::SetAttr>(m).ino()};
    case proto::kTypeFallocate:
      return {As<v1::Fallocate>(m).ino()};
    case proto::kTypeSetXattr:
      return {As<v1::SetXattr>(m).ino()};
    case proto::kTypeRemoveXattr:
      return {As<v1::RemoveXattr>(m).ino()};
    case proto::kTypeOpen:
      return {As<v1::Open>(m).ino()};
    case proto::kTypeRelease:
      return {As<v1::Release>(m).ino()};
    case proto::kTypeCreate:
      return {As<v1::Create>(m).parent()};
    case proto::kTypeMkdir:
      return {As<v1::Mkdir>(m).parent()};
    case proto::kTypeMknod:
      return {As<v1::Mknod>(m).parent()};
    case proto::kTypeSymlink:
      return {As<v1::Symlink>(m).parent()};
    case proto::kTypeUnlink:
      return {As<v1::Unlink>(m).parent()};
    case proto::kTypeRmdir:
      return {As<v1::Rmdir>(m).parent()};
    case proto::kTypeLink:
      return {As<v1::Link>(m).ino(), As<v1::Link>(m).new_parent()};
    case proto::kTypeRename:
      return {As<v1::Rename>(m).parent(), As<v1::Rename>(m).new_parent()};
    case proto::kTypePutAttrs: {
      std::vector<uint64_t> keys;
      const v1::Mut& mut = As<v1::PutAttrs>(m).mut();
      for (const v1::AttrPut& p : mut.puts()) keys.push_back(p.ino());
      for (const v1::WritePut& w : mut.writes()) keys.push_back(w.ino());
      for (const v1::CreatePut& c : mut.creates()) keys.insert(keys.end(), {c.parent(), c.ino()});
      for (const v1::RemovePut& r : mut.removes()) keys.push_back(r.parent());
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      return keys;
    }
    default:
      return {};
  }
}

InodeOrder::TicketPtr InodeOrder::NewTicket(std::vector<uint64_t> keys) {
  auto t = std::make_shared<Ticket>();
  t->keys = std::move(keys);
  return t;
}

bool InodeOrder::Arrive(const TicketPtr& t, std::function<void()> run) {
  MutexLock lock(&mu_);
  t->run = std::move(run);
  for (uint64_t k : t->keys) {
    TicketPtr& last = last_[k];
    if (last && last != t) {
      last->followers.push_back(t);
      ++t->waiting;
    }
    last = t;
  }
  return t->waiting == 0;
}

std::function<void()> InodeOrder::TakeRun(const TicketPtr& t) { return std::exchange(t->run, {}); }

std::vector<std::function<void()>> InodeOrder::Finish(const TicketPtr& t) {
  std::vector<std::function<void()>> now;
  MutexLock lock(&mu_);
  if (t->finished) return now;  // a WRITE finishes early (once queued) and again at its end
  t->finished = true;
  for (uint64_t k : t->keys) {
    auto it = last_.find(k);
    if (it != last_.end() && it->second == t) last_.erase(it);
  }
  for (const TicketPtr& f : t->followers) {
    if (--f->waiting == 0) now.push_back(TakeRun(f));
  }
  t->followers.clear();
  return now;
}

}  // namespace archil::server
