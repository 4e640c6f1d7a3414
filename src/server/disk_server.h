// DiskServer: serves mounts over the disk protocol (docs/protocol.md) on a TCP address, over the
// engine, in the same process as the control plane.
//
// Threads (docs/protocol.md §2, "Server threads" in docs/architecture.md):
// - one I/O thread accepts connections and reads every socket (epoll): it checks each frame's
//   header, CRC and connection rules (§12 rows 1-8), answers HELLO and PING, and runs session
//   creation and binding itself (a mount costs it one catalog lookup and one unsynced write);
// - `workers` request threads parse, validate and execute every other request and send its reply
//   (one sendmsg under the connection's send mutex). Synced commits of concurrent requests share
//   WAL syncs (engine/commit_queue.h), so the pool is as large as the writes that should wait
//   on the disk together.
//
// Limits (§12): unauthenticated connections must bind a session within auth_deadline_ms and are
// at most max_unauthenticated_per_peer per source address; at most max_connections in all;
// authenticated connections silent for 3 leases are closed; a connection's queued request
// payload is capped (reading pauses beyond it); a peer that does not read its replies for
// send_timeout_ms is disconnected. So garbage, slow senders, idle sockets and clients that
// never read cannot stall anyone else or grow memory without bound.
//
// Thread-safety: safe for concurrent use. Destroy before the engine and the authority.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "engine/engine.h"
#include "net/socket.h"
#include "proto/messages.h"
#include "server/authority.h"
#include "server/connection.h"
#include "server/session_registry.h"
#include "server/work_queue.h"

namespace archil::server {

struct DiskServerOptions {
  std::string listen = "127.0.0.1:8421";  // port 0: any free port (tests)
  int workers = 16;
  size_t max_connections = 4096;
  size_t max_unauthenticated_per_peer = 64;
  int auth_deadline_ms = 5000;
  uint32_t default_lease_ms = 15000;
  proto::FrameLimits limits = proto::kDefaultLimits;
  uint64_t max_inflight_bytes_per_connection = uint64_t{64} << 20;
  int send_timeout_ms = 10000;
  std::string software = "archil";
};

class DiskServer {
 public:
  // Listens and starts serving. Busy if the address is in use.
  static Result<std::unique_ptr<DiskServer>> Start(const DiskServerOptions& options,
                                                   engine::Engine* engine, Authority* authority,
                                                   const Clock* clock);
  ~DiskServer();  // Stop()

  // The address it listens on ("127.0.0.1:8421"; the chosen port when options.listen had 0).
  const std::string& address() const { return address_; }
  // Ends the sessions of a deleted disk, or opened by a revoked token: their connections close
  // at once (the client sees the session gone). Returns how many.
  size_t EndDiskSessions(engine::DiskNo disk) { return registry_.EndDisk(disk); }
  size_t EndTokenSessions(std::string_view token_id) { return registry_.EndToken(token_id); }
  size_t sessions() const { return registry_.size(); }
  size_t connections() const { return connection_count_.load(); }
  // Stops accepting, closes every connection, waits for running requests. Idempotent.
  void Stop();

 private:
  DiskServer(const DiskServerOptions& options, engine::Engine* engine, Authority* authority,
             const Clock* clock);
  using ConnPtr = std::shared_ptr<Connection>;

  void Loop();
  void AcceptAll();
  void ReadFrom(const ConnPtr& c);
  // Feeds `bytes` to c's reader and handles every complete frame; false if c was closed.
  bool Drain(const ConnPtr& c, std::string_view bytes);
  // Handles one complete frame on the I/O thread; false if the connection must close.
  bool OnFrame(const ConnPtr& c, proto::Frame frame);
  void Work(const ConnPtr& c, const proto::Frame& frame);
  void Close(const ConnPtr& c);
  void Sweep();
  void ResumeReading(const ConnPtr& c);
  void Wake();

  // The connection and session messages (§5.2), on the I/O thread.
  bool Hello(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& m);
  void SessionCreate(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& m);
  void SessionBind(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& m);
  void Goodbye(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& m);
  // A failed authentication from c's peer: AUTH_FAILED, or AUTH_RATE_LIMITED beyond 10 a minute.
  void AuthFailed(const ConnPtr& c, const proto::FrameHeader& h);
  void Error(const ConnPtr& c, const proto::FrameHeader& h, proto::WireStatus status,
             std::string_view message);

  const DiskServerOptions options_;
  engine::Engine* const engine_;
  Authority* const authority_;
  const Clock* const clock_;
  SessionRegistry registry_;
  std::string server_id_;
  std::string address_;
  net::Fd listener_;
  net::Fd epoll_;
  net::Fd wake_;  // eventfd: stop, or connections to resume
  std::atomic<bool> stop_{false};
  std::atomic<size_t> connection_count_{0};

  // I/O thread only.
  std::map<int, ConnPtr> conns_;
  std::map<std::string, size_t> unauthenticated_;  // per peer host
  struct Failures {
    int64_t window_start_ns = 0;
    int count = 0;
  };
  std::map<std::string, Failures> failures_;  // authentication failures per peer host

  Mutex resume_mu_;
  std::vector<ConnPtr> resume_ ARCHIL_GUARDED_BY(resume_mu_);

  std::unique_ptr<WorkQueue> workers_;
  std::thread io_;
};

}  // namespace archil::server
