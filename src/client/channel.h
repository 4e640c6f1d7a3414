// Channel: one connection from a client to a disk server (docs/protocol.md §2-3), in cleartext or
// TLS (net/tls.h): requests are sent whole (one sendmsg, or one TLS write, each), from any thread,
// and any number can be in flight; replies are matched to their callers by request id.
//
// There is no reader thread: a caller waiting for its reply reads the socket itself when no other
// caller is reading (leader/follower), delivering whatever replies arrive to their callers, and
// hands the reading on when its own reply is in. A lone caller thus sends and receives on its
// own thread, as a blocking ping-pong does: no thread wakes another on its path. Server pushes
// (a GOODBYE before the server closes the connection) are read with the next call and handed
// to the owner's push handler.
//
// A channel that breaks (the server closed it, a send or a frame failed, a call timed out) stays
// broken: every pending and later call fails with Unavailable, and the owner opens a new one.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/cancel.h"
#include "base/mutex.h"
#include "base/status.h"
#include "net/stream.h"
#include "net/tls.h"
#include "proto/frame.h"

namespace archil::client {

struct RawReply {
  proto::FrameHeader header;  // status, flags (REPLAYED)
  std::string body;
  std::string payload;
};

class Channel {
 public:
  // Whether a connection runs TLS: the peer's address decides (docs/protocol.md §2), TLS to
  // another machine and cleartext to this one, unless forced either way.
  struct Security {
    bool force_tls = false;        // TLS to a loopback peer too ("tls://" addresses, tests)
    bool allow_cleartext = false;  // cleartext to another machine too (the token travels bare)
    // The client context, asked for only when a connection needs TLS.
    std::function<Result<std::shared_ptr<net::TlsContext>>()> context;
  };
  // A push from the server, called on the reading caller's thread (keep it short).
  using PushHandler = std::function<void(const proto::Frame& push)>;
  // Connects to `address` ("host:port"); under TLS the server's certificate must name the host.
  // Unavailable if no server answers or the TLS handshake fails (the message says why: an
  // untrusted certificate, a server that is not a disk server).
  static Result<std::unique_ptr<Channel>> Open(const std::string& address, int timeout_ms,
                                               const Security& security,
                                               PushHandler on_push = nullptr);
  ~Channel();  // closes; pending calls fail

  // How long a call waits for its reply.
  struct Wait {
    int timeout_ms = 30000;  // no reply by then: the server is stuck, and the channel breaks
    // The caller stops waiting at `give_up` (if before the timeout) or once `cancel` says so
    // (polled every kCancelPollMs): Unavailable or EINTR, and the channel stays whole (a late
    // reply is dropped).
    std::chrono::steady_clock::time_point give_up = std::chrono::steady_clock::time_point::max();
    const CancelCheck* cancel = nullptr;
  };
  static constexpr int kCancelPollMs = 100;
  // Sends request `type` and waits for its reply as `wait` says. Unavailable if the channel
  // is or becomes broken first (the request may or may not have reached the server).
  Result<RawReply> Call(uint16_t type, std::string_view body, std::string_view payload,
                        const Wait& wait) ARCHIL_EXCLUDES(mu_);
  Result<RawReply> Call(uint16_t type, std::string_view body, std::string_view payload,
                        int timeout_ms) ARCHIL_EXCLUDES(mu_) {
    return Call(type, body, payload, Wait{.timeout_ms = timeout_ms});
  }
  bool broken() const ARCHIL_EXCLUDES(mu_);
  // Whether the channel broke because the server sent a frame that failed its checks (a bad
  // CRC, a body over the limits): the server is not speaking the protocol, so trying again at
  // once would likely fail the same way.
  bool broken_by_bad_frame() const ARCHIL_EXCLUDES(mu_);
  // Breaks the channel: pending calls fail, the socket shuts down.
  void Break(std::string_view why) ARCHIL_EXCLUDES(mu_);

 private:
  Channel(std::unique_ptr<net::Stream> stream, PushHandler on_push)
      : stream_(std::move(stream)), on_push_(std::move(on_push)) {}
  // A caller waiting for its reply. Each has its own condition variable, so that a reply wakes
  // its caller only, and a released reading turn wakes one waiter (not all of them: with 8
  // callers on 2 vCPUs, waking every waiter per reply cost more than the replies).
  struct Pending {
    explicit Pending(Mutex* mu) : cv(mu) {}
    bool done = false;
    bool waiting = false;  // asleep on cv, not reading
    Result<RawReply> result = Status::Unavailable("no reply");
    CondVar cv;
  };
  // The reader's work: receives and delivers frames until `p` is answered, `deadline` passes
  // (OK both), or the connection fails (its error). REQUIRES: the caller holds the reading turn.
  // `bad_frame` is set when the error is a frame that failed its checks.
  Status ReadUntil(const Pending& p, std::chrono::steady_clock::time_point deadline,
                   bool* bad_frame) ARCHIL_EXCLUDES(mu_);
  void Deliver(proto::Frame frame) ARCHIL_EXCLUDES(mu_);

  const std::unique_ptr<net::Stream> stream_;
  const PushHandler on_push_;
  Mutex send_mu_;
  mutable Mutex mu_;
  std::map<uint64_t, Pending*> pending_ ARCHIL_GUARDED_BY(mu_);
  uint64_t next_id_ ARCHIL_GUARDED_BY(mu_) = 1;
  bool broken_ ARCHIL_GUARDED_BY(mu_) = false;
  bool bad_frame_ ARCHIL_GUARDED_BY(mu_) = false;
  bool reading_ ARCHIL_GUARDED_BY(mu_) = false;  // a caller holds the reading turn
  std::string why_ ARCHIL_GUARDED_BY(mu_);
  // The reading turn's state: used only by the caller that holds it.
  proto::FrameReader reader_{proto::kDefaultLimits};
  std::string buf_ = std::string(256 << 10, '\0');
};

}  // namespace archil::client
