// ConnectionLimits: caps on open API connections, in total, per peer address (an IPv4 host, an
// IPv6 /64: base/address_key.h) and for connections that have not yet sent a whole request
// head ("unproven"), so that no one client, and no flood of idle sockets, can take every
// connection the server is willing to hold.
//
// A connection holds a Slot for its lifetime. Acquire refuses (null) over the per-peer cap. Over
// the unproven cap, or the total, it evicts the oldest unproven connection (its Slot's evict
// callback closes it) and grants the new one: idle sockets make room for clients that talk.
// It refuses only when the total is reached by connections that have all proven themselves.
//
// Thread-safety: all methods may be called concurrently; an evict callback is called without
// the lock held, possibly after its connection ended (it must tolerate that).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/mutex.h"

namespace archil {

class ConnectionLimits {
 public:
  ConnectionLimits(size_t max_total, size_t max_per_peer, size_t max_unproven = SIZE_MAX)
      : max_total_(max_total), max_per_peer_(max_per_peer), max_unproven_(max_unproven) {}

  // Released (the counts go down) when destroyed.
  class Slot {
   public:
    Slot(ConnectionLimits* limits, std::string key, uint64_t seq)
        : limits_(limits), key_(std::move(key)), seq_(seq) {}
    ~Slot();
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    // How to close this connection if it must make room (set once, when it starts).
    void OnEvict(std::function<void()> evict);
    // The connection sent a whole request head: it is no longer evictable.
    void Proven();

   private:
    ConnectionLimits* const limits_;
    const std::string key_;
    const uint64_t seq_;
  };

  // A slot for one more connection from `peer` (an address, without the port), or null.
  std::unique_ptr<Slot> Acquire(const std::string& peer) ARCHIL_EXCLUDES(mu_);

  size_t total() const ARCHIL_EXCLUDES(mu_);
  size_t unproven() const ARCHIL_EXCLUDES(mu_);
  uint64_t evicted() const ARCHIL_EXCLUDES(mu_);

 private:
  struct Unproven {
    std::function<void()> evict;
  };
  void Release(const std::string& key, uint64_t seq) ARCHIL_EXCLUDES(mu_);

  const size_t max_total_;
  const size_t max_per_peer_;
  const size_t max_unproven_;
  mutable Mutex mu_;
  size_t total_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t next_seq_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t evicted_ ARCHIL_GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, size_t> per_peer_ ARCHIL_GUARDED_BY(mu_);
  std::map<uint64_t, Unproven> unproven_ ARCHIL_GUARDED_BY(mu_);  // oldest first
};

}  // namespace archil
