// The per-connection checks of docs/protocol.md §12 that follow the frame checks: row 7 (a request
// id is not already in flight on this connection) and row 8 (before the session is bound, only
// HELLO, SESSION_CREATE, SESSION_BIND, PING and GOODBYE; HELLO exactly once and first), and the
// cap on requests in flight. The receiving side of a connection (the server's reader for client
// requests, the client's for pushes) keeps one. Pure state; no I/O.
//
// Thread-safety: not thread-safe; one connection's reader owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>

#include "proto/frame.h"
#include "proto/wire_status.h"

namespace archil::proto {

// A refusal, and whether the connection closes (frame-level: the stream is no longer trusted).
struct Refusal {
  WireStatus status;
  bool close;
  std::string message;
};

class ConnectionRules {
 public:
  explicit ConnectionRules(uint32_t max_in_flight = 256) : max_in_flight_(max_in_flight) {}

  // Checks an incoming request or push (not a reply: replies are matched by the sender). On
  // success the request is in flight until Answered. Order: HELLO first and once (row 8), the
  // pre-authentication types (row 8), the id not in flight (row 7), the in-flight cap
  // (kDelay: the connection stays, the peer retries with backoff).
  std::optional<Refusal> Admit(const FrameHeader& h);
  // The request with this id was answered; its id may be used again.
  void Answered(uint64_t request_id) { in_flight_.erase(request_id); }
  // The session was created or bound on this connection: every type is allowed from now on.
  void Authenticated() { authenticated_ = true; }

  bool authenticated() const { return authenticated_; }
  size_t in_flight() const { return in_flight_.size(); }

 private:
  const uint32_t max_in_flight_;
  bool hello_seen_ = false;
  bool authenticated_ = false;
  std::unordered_set<uint64_t> in_flight_;
};

}  // namespace archil::proto
