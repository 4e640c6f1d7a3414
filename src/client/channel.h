// Channel: one connection from a client to a disk server (docs/protocol.md §2-3): requests are
// sent whole with one sendmsg each, from any thread; one reader thread matches replies to their
// callers by request id, so any number of calls can be in flight at once.
//
// A channel that breaks (the server closed it, a send or a frame failed, a call timed out) stays
// broken: every pending and later call fails with Unavailable, and the owner opens a new one.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "net/socket.h"
#include "proto/frame.h"

namespace archil::client {

struct RawReply {
  proto::FrameHeader header;  // status, flags (REPLAYED)
  std::string body;
  std::string payload;
};

class Channel {
 public:
  // Connects (plain TCP; loopback only until TLS is built, docs/protocol.md §2).
  static Result<std::unique_ptr<Channel>> Open(const std::string& address, int timeout_ms);
  ~Channel();  // closes; pending calls fail

  // Sends request `type` and waits up to `timeout_ms` for its reply. Unavailable if the channel
  // is or becomes broken first (the request may or may not have reached the server).
  Result<RawReply> Call(uint16_t type, std::string_view body, std::string_view payload,
                        int timeout_ms) ARCHIL_EXCLUDES(mu_);
  bool broken() const ARCHIL_EXCLUDES(mu_);
  // Breaks the channel: pending calls fail, the socket shuts down.
  void Break(std::string_view why) ARCHIL_EXCLUDES(mu_);

 private:
  explicit Channel(net::Fd fd) : fd_(std::move(fd)) {}
  struct Pending {
    bool done = false;
    Result<RawReply> result = Status::Unavailable("no reply");
  };
  void ReadLoop();
  void Deliver(proto::Frame frame) ARCHIL_EXCLUDES(mu_);

  net::Fd fd_;
  Mutex send_mu_;
  mutable Mutex mu_;
  CondVar replied_{&mu_};
  std::map<uint64_t, Pending*> pending_ ARCHIL_GUARDED_BY(mu_);
  uint64_t next_id_ ARCHIL_GUARDED_BY(mu_) = 1;
  bool broken_ ARCHIL_GUARDED_BY(mu_) = false;
  std::string why_ ARCHIL_GUARDED_BY(mu_);
  std::thread reader_;
};

}  // namespace archil::client
