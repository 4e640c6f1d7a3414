// ConnectionLimits: caps on open API connections, in total and per peer address, so that no one
// client (or a flood of idle sockets) can take every connection the server is willing to hold.
// A connection holds a Slot for its lifetime; Acquire refuses (nullopt) over either cap.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/mutex.h"

namespace archil {

class ConnectionLimits {
 public:
  ConnectionLimits(size_t max_total, size_t max_per_peer)
      : max_total_(max_total), max_per_peer_(max_per_peer) {}

  // Released (the counts go down) when destroyed.
  class Slot {
   public:
    Slot(ConnectionLimits* limits, std::string peer) : limits_(limits), peer_(std::move(peer)) {}
    ~Slot();
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    ConnectionLimits* const limits_;
    const std::string peer_;
  };

  // A slot for one more connection from `peer` (an address, without the port), or null when the
  // server already holds max_total connections or max_per_peer from this peer.
  std::unique_ptr<Slot> Acquire(const std::string& peer);

  size_t total() const;

 private:
  void Release(const std::string& peer);

  const size_t max_total_;
  const size_t max_per_peer_;
  mutable Mutex mu_;
  size_t total_ ARCHIL_GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, size_t> per_peer_ ARCHIL_GUARDED_BY(mu_);
};

}  // namespace archil
