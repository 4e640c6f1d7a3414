// DirAttrs: directory attributes a client that alone changes its disk can answer from memory.
//
// The kernel drops what it knows of a directory's attributes after every change of its names,
// and asks again (GETATTR) before the next permission check in it: one round trip per file
// created or removed, beside the change itself. The server's answer to each change of names
// carries the directory's attributes after it (protocol.md §7), so on an exclusive mount the
// next GETATTR can be answered from that answer.
//
// The contract, per inode: attributes are kept only from the answer to a change that was the only
// one of that inode in flight from its sending to its answer, and are dropped when the next change
// is sent, or when the inode is removed or moved (Forget). So a kept value is what the server
// would answer now, unless a change sent since has been answered without being recorded yet,
// which is a read concurrent with that change.
//
// Bounded: past `max_inodes` inodes, every idle one (no change in flight) is dropped.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "base/mutex.h"
#include "posix/types.h"

namespace archil::client {

class DirAttrs {
 public:
  static constexpr size_t kDefaultMaxInodes = size_t{1} << 16;

  explicit DirAttrs(size_t max_inodes = kDefaultMaxInodes) : max_inodes_(max_inodes) {}

  // Before a request that may change `ino`'s attributes is sent; returns its ticket for Changed
  // (0 when another change of `ino` is in flight: its answer will not be kept).
  uint64_t Changing(posix::Ino ino) ARCHIL_EXCLUDES(mu_);
  // After that request was answered (every Changing has exactly one Changed). `after`: the
  // directory attributes the answer carried for `ino`, if any (ignored if they name another
  // inode).
  void Changed(posix::Ino ino, uint64_t ticket, const std::optional<posix::Attr>& after)
      ARCHIL_EXCLUDES(mu_);
  // `attr` is a directory the answer to its MKDIR just gave: kept, since no change of it can have
  // been sent before its number was known. Ignored if `attr` is not a directory or something is
  // already kept or in flight for its inode (inode numbers are never reused, so neither happens).
  void Created(const posix::Attr& attr) ARCHIL_EXCLUDES(mu_);
  // `ino` was removed, or moved to another directory (its ".." and ctime changed).
  void Forget(posix::Ino ino) ARCHIL_EXCLUDES(mu_);

  // A create in `ino` answered by the client itself (client/attr_log.h): if its attributes are
  // kept and no change of it is in flight, they take `time` as mtime and ctime and `links` more
  // links (+1 for a new subdirectory's "..", -1 for a removed one's): what the server will hold
  // once the change is applied; they are returned. Else nullopt, and nothing is kept (they would
  // be older than the change).
  std::optional<posix::Attr> Touch(posix::Ino ino, posix::Timespec time, int links = 0)
      ARCHIL_EXCLUDES(mu_);

  std::optional<posix::Attr> Get(posix::Ino ino) const ARCHIL_EXCLUDES(mu_);
  size_t size() const ARCHIL_EXCLUDES(mu_);

 private:
  struct Entry {
    uint64_t ticket = 0;  // the last change sent (tickets are never reused)
    uint32_t in_flight = 0;
    std::optional<posix::Attr> attr;
  };
  void DropIdle() ARCHIL_REQUIRES(mu_);

  const size_t max_inodes_;
  mutable Mutex mu_;
  std::unordered_map<uint64_t, Entry> entries_ ARCHIL_GUARDED_BY(mu_);
  uint64_t next_ticket_ ARCHIL_GUARDED_BY(mu_) = 0;
};

// Changing on construction; Changed on Done (with what the answer carried) or, if Done was not
// called, on destruction.
class DirChange {
 public:
  DirChange(DirAttrs* attrs, posix::Ino ino)
      : attrs_(attrs), ino_(ino), ticket_(attrs ? attrs->Changing(ino) : 0) {}
  ~DirChange() { Done(std::nullopt); }
  void Done(const std::optional<posix::Attr>& after) {
    if (attrs_ == nullptr) return;
    attrs_->Changed(ino_, ticket_, after);
    attrs_ = nullptr;
  }
  DirChange(const DirChange&) = delete;
  DirChange& operator=(const DirChange&) = delete;

 private:
  DirAttrs* attrs_;
  const posix::Ino ino_;
  const uint64_t ticket_;
};

}  // namespace archil::client
