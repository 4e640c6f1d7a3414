// InodeOrder: the order in which one connection's mutations run (docs/protocol.md §6). The
// server runs requests in parallel, so that concurrent synced writes share WAL syncs; but two
// mutations that touch a common inode run in the order they arrived (a file's overlapping
// writes, a truncate after writes), as the client sent them. Each mutation waits for the last
// earlier mutation of each inode it touches, and nothing else.
//
// Which inodes a mutation touches (MutationKeys): its inode for data, attribute and xattr
// changes and opens; the parent directory for namespace changes (both for rename and link); each
// inode of a PUT_ATTRS. (The puts another request carries ahead of it are ordered by the client,
// which sends no other mutation while they are in flight: protocol.md §5.3.2.)
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "proto/messages.h"

namespace archil::server {

// The inodes request `m` of mutating type `type` touches; empty for other types.
std::vector<uint64_t> MutationKeys(uint16_t type, const proto::Message& m);

class InodeOrder {
 public:
  struct Ticket;
  using TicketPtr = std::shared_ptr<Ticket>;

  // A mutation touching `keys`, not ordered yet (so that its work can refer to its ticket).
  static TicketPtr NewTicket(std::vector<uint64_t> keys);
  // Orders `t` after the last earlier mutation of each of its inodes, with `run` as its work.
  // Returns true if it may run now (take the work with TakeRun); otherwise a predecessor's Finish
  // returns it. REQUIRES: called in arrival order, once per ticket.
  bool Arrive(const TicketPtr& t, std::function<void()> run) ARCHIL_EXCLUDES(mu_);
  // Takes the work of a runnable ticket out of it (once).
  static std::function<void()> TakeRun(const TicketPtr& t);
  // The mutation finished: returns the work of the mutations that may run now, in arrival order.
  // Later calls for the same ticket return nothing (a WRITE releases its followers once its commit
  // is queued, ADR 0015, and calls this again when it ends).
  std::vector<std::function<void()>> Finish(const TicketPtr& t) ARCHIL_EXCLUDES(mu_);

  struct Ticket {
    std::vector<uint64_t> keys;
    std::function<void()> run;
    int waiting = 0;                   // unfinished predecessors
    std::vector<TicketPtr> followers;  // mutations waiting for this one
    bool finished = false;             // guarded by the InodeOrder's mu_
  };

 private:
  Mutex mu_;
  std::unordered_map<uint64_t, TicketPtr> last_ ARCHIL_GUARDED_BY(mu_);  // per inode
};

}  // namespace archil::server
