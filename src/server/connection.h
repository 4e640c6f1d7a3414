// Connection: one client connection of the disk server: its socket, the frame reader the I/O
// thread feeds, the per-connection rules of docs/protocol.md §12 (rows 7-8, the in-flight cap),
// and the session it is bound to.
//
// Threads. The server's one I/O thread reads every connection and owns `reader`; request
// workers send replies. Sends are serialized by the send mutex, and each frame is sent whole
// (one sendmsg in cleartext, §2; one TLS write, net/tls.h), so replies of concurrent requests
// never interleave. Only the I/O thread closes the
// socket, and only when it drops its reference: anyone else calls Shutdown(), which the I/O
// thread then sees as a closed socket. The fd lives as long as the last reference.
//
// Thread-safety: as described; the rest is guarded by mu_.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "net/stream.h"
#include "proto/connection_rules.h"
#include "proto/frame.h"
#include "server/inode_order.h"
#include "server/session.h"

namespace archil::server {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::unique_ptr<net::Stream> stream, std::string peer, int64_t now_ns,
             int send_timeout_ms)
      : stream_(std::move(stream)),
        peer_(std::move(peer)),
        created_ns_(now_ns),
        send_timeout_ms_(send_timeout_ms) {
    last_frame_ns = now_ns;
  }

  int fd() const { return stream_->fd(); }
  // Received bytes come through the stream (the I/O thread only).
  net::Stream& stream() { return *stream_; }
  const std::string& peer() const { return peer_; }
  int64_t created_ns() const { return created_ns_; }

  // Sends the reply to `request` (flags REPLY | extra). On a send failure (the peer is gone or
  // does not read) the connection is shut down.
  void Reply(const proto::FrameHeader& request, proto::WireStatus status, std::string_view body,
             std::string_view payload = {}, uint8_t extra_flags = 0) ARCHIL_EXCLUDES(send_mu_);
  // Sends a GOODBYE push (protocol.md §11: the session ended, and why; end_session when it is
  // final) without waiting more than 100 ms for a peer that does not read, then shuts down.
  void SayGoodbye(const Session::Ending& why) ARCHIL_EXCLUDES(send_mu_);
  // Safe from any thread; idempotent.
  void Shutdown();

  // §12 rows 7-8 and the in-flight cap.
  std::optional<proto::Refusal> Admit(const proto::FrameHeader& h) ARCHIL_EXCLUDES(mu_);
  void Answered(uint64_t request_id) ARCHIL_EXCLUDES(mu_);

  // The session this connection is bound to (nullptr before SESSION_CREATE/BIND).
  std::shared_ptr<Session> session() const ARCHIL_EXCLUDES(mu_);
  // Binds the connection to `s`: the session can close it, and every request type is allowed.
  // On lane `lane`: a connection already bound to it is closed (Session::Attach).
  void Bind(const std::shared_ptr<Session>& s, uint32_t lane = 0) ARCHIL_EXCLUDES(mu_);
  // Unbinds (the I/O thread, when the connection closes).
  void Unbind() ARCHIL_EXCLUDES(mu_);
  bool authenticated() const ARCHIL_EXCLUDES(mu_);

  // I/O thread only.
  // Gated: each frame waits for the server's request budget before anything is allocated for it.
  proto::FrameReader reader{proto::kPreAuthLimits, proto::FrameReader::Gate::kAdmitEachFrame};
  // Bytes received after the header of a frame that waits for admission (at most one receive).
  std::string stash;
  // The budget key of this connection's frames: 1 + its session's disk number, 0 before it is
  // bound (server/request_budget.h).
  uint64_t budget_disk = 0;
  // The frame being read: what it was charged (0: none admitted), and since when (its deadline).
  uint64_t charged_disk = 0;
  uint64_t charged_bytes = 0;
  int64_t frame_started_ns = 0;
  int64_t last_frame_ns = 0;
  bool reading_paused = false;
  bool counted_unauthenticated = true;  // in the per-peer count of unbound connections
  // The order of this connection's mutations (server/inode_order.h).
  InodeOrder order;
  // Bytes of this connection's frames queued or executing (charged to the request budget).
  std::atomic<uint64_t> inflight_bytes{0};

 private:
  // Sends one frame whole under the send mutex; Unavailable if shut down or the send failed.
  Status Send(proto::FrameHeader h, std::string_view body, std::string_view payload, int timeout_ms)
      ARCHIL_EXCLUDES(send_mu_);

  const std::unique_ptr<net::Stream> stream_;
  const std::string peer_;
  const int64_t created_ns_;
  const int send_timeout_ms_;
  std::atomic<bool> shut_{false};
  std::atomic<uint64_t> next_push_id_{1};

  Mutex send_mu_;

  mutable Mutex mu_;
  proto::ConnectionRules rules_ ARCHIL_GUARDED_BY(mu_);
  std::shared_ptr<Session> session_ ARCHIL_GUARDED_BY(mu_);
  uint64_t attach_key_ ARCHIL_GUARDED_BY(mu_) = 0;
};

}  // namespace archil::server
