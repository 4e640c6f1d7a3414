// InoPool: the inode numbers the server granted this client's session (INO_GRANT, protocol.md
// §5.3.3), handed out one at a time for the creates the client answers itself (ADR 0025).
//
// The server accepts numbers of the session's last two ranges. So the pool asks for the next
// range only while it holds one (the one in use), when half of it is used: the range in use
// then becomes the server's previous one, and is used up before the new one.
//
// Thread-safety: safe for concurrent use. A Take that asks for a range does so on the caller's
// thread, holding the pool's lock (one round trip every `count` / 2 numbers).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>

#include "base/mutex.h"
#include "base/status.h"
#include "posix/types.h"

namespace archil::client {

class InoPool {
 public:
  struct Range {
    uint64_t first = 0;
    uint32_t count = 0;
  };
  // Asks the server for `count` numbers; the range it granted.
  using Grant = std::function<Result<Range>(uint32_t count)>;

  // REQUIRES: count >= 2.
  InoPool(Grant grant, uint32_t count) : grant_(std::move(grant)), count_(count) {}

  // A number not used yet, or nullopt if none is in hand and the server granted none (the
  // grant's error is logged once per failure).
  std::optional<posix::Ino> Take() ARCHIL_EXCLUDES(mu_);

  // Drops the numbers in hand: they were granted to a session that ended (a new session's
  // creates must use its own grants).
  void Reset() ARCHIL_EXCLUDES(mu_);

  uint64_t granted() const ARCHIL_EXCLUDES(mu_);  // numbers granted since the start

 private:
  struct Held {
    uint64_t next = 0;
    uint64_t end = 0;
  };
  // Asks for a range and appends it; false if the server granted none.
  bool Refill() ARCHIL_REQUIRES(mu_);

  const Grant grant_;
  const uint32_t count_;
  mutable Mutex mu_;
  std::deque<Held> held_ ARCHIL_GUARDED_BY(mu_);
  uint64_t granted_ ARCHIL_GUARDED_BY(mu_) = 0;
};

}  // namespace archil::client
