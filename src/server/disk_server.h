// DiskServer: serves mounts over the disk protocol (docs/protocol.md) on a TCP address, over the
// engine, in the same process as the control plane.
//
// Threads: a pool of `workers` threads in a leader/follower pattern. One of them at a time leads:
// it waits on epoll for every socket, reads what arrived, and checks each frame's header, CRC
// and connection rules (§12 rows 1-8); it answers HELLO and PING and runs session creation and
// binding itself (a mount costs one catalog lookup and one unsynced write). As soon as a request
// is complete it hands the lead to another thread and executes the request itself (validate,
// run on the engine, one sendmsg of the reply under the connection's send mutex), so a request
// crosses no thread on its way; the other complete requests of that round go to the queue the
// followers take from. (Keeping the lead while running a read was measured slower, in latency
// and in throughput: docs/measurements.md §11.) Requests are parsed by the leader, in arrival
// order, so that one connection's mutations of one inode keep their order (inode_order.h). Synced
// commits of concurrent requests share WAL syncs (engine/commit/commit_queue.h), so the pool is as
// large as the writes that should wait on the disk together; when every thread is busy, nothing
// reads the sockets (TCP backpressure).
//
// Limits (§12): unauthenticated connections must bind a session within auth_deadline_ms and are
// at most max_unauthenticated_per_peer per source address; at most max_connections in all;
// authenticated connections silent for 3 leases are closed; a connection's queued request
// payload is capped (reading pauses beyond it), and so are the request bytes held for all
// connections together (reading stops beyond it); a peer that does not read its replies for
// send_timeout_ms is disconnected; while several disks want the CPU, a disk that spends more than
// its share of it has its requests held until it has earned that back (cpu_share.h). So garbage,
// slow senders, idle sockets, expensive requests and clients that never read cannot stall anyone
// else or grow memory without bound.
//
// Thread-safety: safe for concurrent use. Destroy before the engine and the authority.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/mutex.h"
#include "engine/served_disks.h"
#include "metrics/registry.h"
#include "net/socket.h"
#include "net/tls.h"
#include "proto/messages.h"
#include "server/authority.h"
#include "server/connection.h"
#include "server/cpu_share.h"
#include "server/request_budget.h"
#include "server/session_registry.h"

namespace archil::server {

struct Response;  // requests.h

struct DiskServerOptions {
  std::string listen = "127.0.0.1:8421";  // port 0: any free port (tests)
  // Asked before each mutating request of a session on `disk` runs (null: always OK).
  // Unavailable: the request is answered DELAY, and the client sends it again after a while
  // (nothing ran); any other error is its answer. The tier (apps/archil-server/tier_service.h)
  // holds writes this way while its lease has lapsed or the disk's upload backlog is too large.
  std::function<Status(engine::DiskNo disk)> admit_mutation;
  int workers = 16;
  size_t max_connections = 4096;
  // Connections not bound to a session yet: at most this many per peer address (an IPv4 host,
  // an IPv6 /64) and in all; when the pool (or the whole table) is full, the oldest is closed.
  size_t max_unauthenticated_per_peer = 64;
  size_t max_unauthenticated = 256;
  int auth_deadline_ms = 5000;
  uint32_t default_lease_ms = 15000;
  proto::FrameLimits limits = proto::kDefaultLimits;
  // Request bytes held (each frame from its admitted header until its answer), per connection,
  // per disk (all its sessions), and in all: a frame that does not fit waits, unread, with its
  // connection paused alone (server/request_budget.h says how progress is kept).
  uint64_t max_inflight_bytes_per_connection = uint64_t{64} << 20;
  uint64_t max_buffered_bytes_per_disk = uint64_t{256} << 20;
  uint64_t max_buffered_bytes_total = uint64_t{1} << 30;
  // A frame must arrive whole this long after its header, or its connection is closed.
  int frame_deadline_ms = 30000;
  int send_timeout_ms = 10000;
  std::string software = "archil";
  // Each connection is TLS or cleartext by its first byte (docs/protocol.md §2): a TLS
  // handshake needs `tls` (nullptr: refused); cleartext is accepted from loopback peers only,
  // unless allow_cleartext (the operator's --insecure).
  std::shared_ptr<net::TlsContext> tls;
  bool allow_cleartext = false;
  // The CPUs whose time requests share by disk while several disks want it (server/cpu_share.h):
  // 0, those this process may run on; negative, no sharing (a hog's requests are never held).
  double share_cpus = 0;
  // The fraction of those CPUs that letting connections in (accepting, evicting silent ones)
  // may use while they are in demand; the rest of a flood waits in the kernel's queue.
  double admission_share = 0.25;
  // Where the server counts its requests (archil_disk_* in docs/operations.md); null: nowhere.
  // REQUIRES: outlives the server.
  metrics::Registry* metrics = nullptr;
};

class DiskServer {
 public:
  // Listens and starts serving. Busy if the address is in use.
  static Result<std::unique_ptr<DiskServer>> Start(const DiskServerOptions& options,
                                                   engine::ServedDisks* engine,
                                                   Authority* authority, const Clock* clock);
  ~DiskServer();  // Stop()

  // The address it listens on ("127.0.0.1:8421"; the chosen port when options.listen had 0).
  const std::string& address() const { return address_; }
  // Ends the sessions of a deleted disk, or opened by a revoked token: their connections close
  // at once (the client sees the session gone). Returns how many.
  size_t EndDiskSessions(engine::DiskNo disk) { return registry_.EndDisk(disk); }
  size_t EndTokenSessions(std::string_view token_id) { return registry_.EndToken(token_id); }
  // Ends the sessions on any of `disks` (a lineage, public id `disk_id`) that have a connection
  // from an address `allowed` leaves out (its list changed). Returns how many.
  size_t EndDisallowedSessions(const std::set<uint64_t>& disks, const std::vector<IpRange>& allowed,
                               std::string_view disk_id);
  // Ends the mounts of the checkpoint, then deletes it (engine::ServedDisks::DeleteCheckpoint).
  Status DeleteCheckpoint(engine::DiskNo disk, std::string_view name);
  size_t sessions() const { return registry_.size(); }
  size_t connections() const { return connection_count_.load(); }
  // Request bytes held now, the most held at once, and how often a frame waited for the budget.
  uint64_t buffered_bytes() const { return budget_.total(); }
  uint64_t peak_buffered_bytes() const { return budget_.peak(); }
  uint64_t starved() const { return starved_count_.load(); }
  // Paused connections resumed (tried again) since the start.
  uint64_t resumed() const { return resumed_count_.load(); }
  // Requests held because their disk was over its CPU share (server/cpu_share.h).
  uint64_t held() const { return held_count_.load(); }
  // Times the listener was left unwatched because letting connections in was over its share.
  uint64_t accept_pauses() const { return accept_pauses_.load(); }
  // Unauthenticated connections closed to make room for new ones.
  uint64_t evicted() const { return evicted_count_.load(); }
  // Stops accepting, closes every connection, waits for running requests. Idempotent.
  void Stop();

 private:
  DiskServer(const DiskServerOptions& options, engine::ServedDisks* engine, Authority* authority,
             const Clock* clock);
  using ConnPtr = std::shared_ptr<Connection>;
  // A request ready to run, and the budget key of its disk (whose CPU share it spends).
  struct Job {
    uint64_t disk = 0;
    std::function<void()> run;
  };

  // A pool thread: leads, or runs queued requests, until Stop.
  void Run() ARCHIL_EXCLUDES(lf_mu_, io_mu_);
  // Runs `job` now and charges its CPU time to its disk, or, while its disk is over its CPU
  // share, holds it until its release time (a pool thread runs it then).
  void RunOrHold(Job job) ARCHIL_EXCLUDES(lf_mu_, io_mu_);
  // Moves the held jobs whose time has come (all of them once stopping) to jobs_.
  void ReleaseHeld(int64_t now_ns) ARCHIL_REQUIRES(lf_mu_);
  // One round of the leader: epoll, accept, read; returns the requests that became complete.
  std::vector<Job> Lead() ARCHIL_EXCLUDES(io_mu_);
  // The rest runs for the leader (under io_mu_), except Work and Error.
  // Accepts up to kAcceptsPerRound waiting connections.
  static constexpr int kAcceptsPerRound = 32;
  void AcceptSome() ARCHIL_REQUIRES(io_mu_);
  // AcceptSome as far as the CPU share's admission account allows (cpu_share.h): over it, the
  // listener is left out of epoll until the account's release time and new connections wait in
  // the kernel's queue, so that a flood of connections costs the disks at most that share.
  void Admit() ARCHIL_REQUIRES(io_mu_);
  // Watches the listener again once its pause has ended.
  void ResumeAccepting(int64_t now_ns) ARCHIL_REQUIRES(io_mu_);
  // A new connection's first byte has arrived (or it closed): it becomes a Connection over a
  // TLS or cleartext stream, or is closed.
  struct Pending {
    net::Fd fd;
    std::string peer;
    int64_t created_ns = 0;
  };
  void ChooseStream(int fd) ARCHIL_REQUIRES(io_mu_);
  // The mutation header of request `m` of type `type`; null if it does not mutate.
  static const v1::Mut* MutationOf(uint16_t type, const proto::Message& m);
  void CountUnauthenticated(const std::string& peer) ARCHIL_REQUIRES(io_mu_);
  void UncountUnauthenticated(const std::string& peer) ARCHIL_REQUIRES(io_mu_);
  // Closes an unauthenticated connection to make room: the one that has waited longest without
  // sending a byte, else (every one has begun its handshake) the oldest of those. False if there
  // is none. A client that connects and says HELLO at once is thus never pushed out by sockets
  // that say nothing, however fast they come.
  bool EvictOldestUnauthenticated() ARCHIL_REQUIRES(io_mu_);
  void DropPending(std::map<int, Pending>::iterator it, std::string_view why)
      ARCHIL_REQUIRES(io_mu_);
  void ReadFrom(const ConnPtr& c) ARCHIL_REQUIRES(io_mu_);
  // Feeds `bytes` to c's reader and handles every complete frame; false if c was closed.
  bool Drain(const ConnPtr& c, std::string_view bytes) ARCHIL_REQUIRES(io_mu_);
  // What one admitted frame holds of the request budget.
  struct Charge {
    uint64_t disk = 0;
    uint64_t bytes = 0;
  };
  // Charges the frame whose header c's reader holds; false (nothing charged) if it must wait.
  bool AdmitFrame(const ConnPtr& c) ARCHIL_REQUIRES(io_mu_) ARCHIL_EXCLUDES(resume_mu_);
  // Handles one complete frame; false if the connection must close. A frame queued for a worker
  // takes `charge` with it (left 0); the caller discharges what is left.
  bool OnFrame(const ConnPtr& c, proto::Frame frame, Charge* charge) ARCHIL_REQUIRES(io_mu_);
  // Executes a request and replies (any pool thread), then discharges its frame. `on_queued`:
  // Execute's, for a WRITE.
  void Work(const ConnPtr& c, const proto::Frame& frame, const proto::Message* m,
            proto::WireStatus parsed, Charge charge, const std::function<void()>& on_queued = {});
  void Close(const ConnPtr& c) ARCHIL_REQUIRES(io_mu_);
  void Sweep() ARCHIL_REQUIRES(io_mu_);
  void ResumeReading(const ConnPtr& c) ARCHIL_REQUIRES(io_mu_);
  // Stops reading c (epoll reports only its close) until ResumeReading.
  void PauseReading(const ConnPtr& c) ARCHIL_REQUIRES(io_mu_);
  // Pauses c, whose next frame of `bytes` did not fit (`verdict`), until a discharge may let it
  // in: one of its disk's (kOverShare) or one that makes room under the total (kOverTotal).
  // `seen` is the budget's discharges() read before the refused TryCharge.
  void Starve(const ConnPtr& c, RequestBudget::Verdict verdict, uint64_t bytes, uint64_t seen)
      ARCHIL_REQUIRES(io_mu_) ARCHIL_EXCLUDES(resume_mu_);
  // Returns a frame's charge; resumes the connections whose waiting frames the room it leaves
  // can take, first come first served (not every waiting one: a herd of 192 connections tried
  // again on every discharge took most of the server's CPU, docs/measurements.md §19).
  void Discharge(Charge charge) ARCHIL_EXCLUDES(resume_mu_);
  // A connection paused for the budget, and the size of the frame it waits to have admitted.
  struct Starved {
    ConnPtr conn;
    uint64_t bytes = 0;
  };
  // Moves to resume_, from the front of `q`, the connections whose frames fit in `room` together
  // (and the first one whatever its size if `first_regardless`). True if it moved any.
  bool ResumeWhatFits(std::deque<Starved>* q, uint64_t room, bool first_regardless)
      ARCHIL_REQUIRES(resume_mu_);
  void Wake();

  // The connection and session messages (§5.2), run by the leader.
  bool Hello(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& m);
  void SessionCreate(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& m)
      ARCHIL_REQUIRES(io_mu_);
  void SessionBind(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& m)
      ARCHIL_REQUIRES(io_mu_);
  void Goodbye(const ConnPtr& c, const proto::FrameHeader& h, const proto::Message& m);
  // A failed authentication from c's peer: AUTH_FAILED, or AUTH_RATE_LIMITED beyond 10 a minute.
  void AuthFailed(const ConnPtr& c, const proto::FrameHeader& h) ARCHIL_REQUIRES(io_mu_);
  static constexpr int kAuthFailuresPerMinute = 10;
  // SESSION_CREATE's steps (disk_server_sessions.cc). Those that may refuse reply to the refusal
  // themselves and return false.
  // ACCESS_DENIED for a session from an address the disk's list leaves out; false then.
  bool AddressAllowed(const ConnPtr& c, const proto::FrameHeader& h, const Grant& grant);
  // The authority's refusal of a token as its answer.
  void RefuseGrant(const ConnPtr& c, const proto::FrameHeader& h, const Status& refusal)
      ARCHIL_REQUIRES(io_mu_);
  // Same-host reclaim (§10.2): the session this mount point left (its daemon died) ends, unless
  // it is still connected or was opened with another token (CLIENT_ID_IN_USE). Sets
  // *replaced_holder to the ended session's holder id.
  bool ReclaimMountPoint(const ConnPtr& c, const proto::FrameHeader& h, const SessionIdentity& id,
                         std::string* replaced_holder) ARCHIL_REQUIRES(io_mu_);
  // One mount per disk (§10.2): the disk's other mounts end if they have no connection left or
  // `force` takes the disk over; a connected one refuses the new mount (DELEG_CONFLICT).
  bool DisplaceOtherMounts(const ConnPtr& c, const proto::FrameHeader& h, const SessionIdentity& id,
                           bool force, std::string_view disk_id) ARCHIL_REQUIRES(io_mu_);
  void Error(const ConnPtr& c, const proto::FrameHeader& h, proto::WireStatus status,
             std::string_view message);

  // Per message type, made at Start (read-only after, so looked up without a lock).
  struct OpMetrics {
    metrics::Counter* answered = nullptr;
    metrics::Histogram* seconds = nullptr;
  };
  void RegisterMetrics();
  void Count(uint16_t type, const Response& r, uint64_t bytes_in, int64_t start_ns);

  const DiskServerOptions options_;
  engine::ServedDisks* const engine_;
  std::map<uint16_t, OpMetrics> op_metrics_;
  metrics::CounterFamily* errors_ = nullptr;
  metrics::Counter* bytes_written_ = nullptr;
  metrics::Counter* bytes_read_ = nullptr;
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

  // The leader's state: held by the thread that leads, for its round.
  Mutex io_mu_;
  std::map<int, ConnPtr> conns_ ARCHIL_GUARDED_BY(io_mu_);
  std::map<int, Pending> pending_ ARCHIL_GUARDED_BY(io_mu_);  // accepted, first byte not seen
  // pending_ in the order accepted, (created_ns, fd); entries whose fd left pending_ (or was
  // reused since: another created_ns) are skipped when met.
  std::deque<std::pair<int64_t, int>> pending_order_ ARCHIL_GUARDED_BY(io_mu_);
  // Unauthenticated connections per net::AddressKey, and in all.
  std::map<std::string, size_t> unauthenticated_ ARCHIL_GUARDED_BY(io_mu_);
  size_t unauthenticated_total_ ARCHIL_GUARDED_BY(io_mu_) = 0;
  struct Failures {
    int64_t window_start_ns = 0;
    int count = 0;
    int64_t last_accept_ns = 0;  // over the limit: new connections at one a second
  };
  // Authentication failures per net::AddressKey of the peer.
  std::map<std::string, Failures> failures_ ARCHIL_GUARDED_BY(io_mu_);
  std::vector<Job> ready_ ARCHIL_GUARDED_BY(io_mu_);  // this round's requests
  int64_t last_sweep_ns_ ARCHIL_GUARDED_BY(io_mu_) = 0;
  int64_t accept_paused_until_ns_ ARCHIL_GUARDED_BY(io_mu_) = 0;  // 0: the listener is watched
  // Connections to read again although epoll will not report them (their stream holds bytes).
  std::vector<ConnPtr> again_ ARCHIL_GUARDED_BY(io_mu_);

  // The pool: who leads, and requests waiting for a thread.
  Mutex lf_mu_;
  CondVar lf_cv_{&lf_mu_};
  bool leading_ ARCHIL_GUARDED_BY(lf_mu_) = false;
  std::deque<Job> jobs_ ARCHIL_GUARDED_BY(lf_mu_);
  // Jobs of disks over their CPU share, by the time they may run.
  std::multimap<int64_t, Job> held_ ARCHIL_GUARDED_BY(lf_mu_);
  std::unique_ptr<CpuShare> share_;  // null: no sharing

  // Orders checkpoint deletes against new mounts of a checkpoint (DeleteCheckpoint).
  std::mutex checkpoint_mu_;

  Mutex resume_mu_;
  std::vector<ConnPtr> resume_ ARCHIL_GUARDED_BY(resume_mu_);
  // Paused until their disk discharges (by budget key), or until the total drops below its cap.
  std::map<uint64_t, std::deque<Starved>> starved_by_disk_ ARCHIL_GUARDED_BY(resume_mu_);
  std::deque<Starved> starved_for_total_ ARCHIL_GUARDED_BY(resume_mu_);
  RequestBudget budget_;
  std::atomic<uint64_t> starved_count_{0};
  std::atomic<uint64_t> held_count_{0};
  std::atomic<uint64_t> accept_pauses_{0};
  std::atomic<uint64_t> resumed_count_{0};
  std::atomic<uint64_t> evicted_count_{0};
  // Set when the budget held much: the next quiet sweep returns freed frame memory to the system.
  bool trim_after_peak_ ARCHIL_GUARDED_BY(io_mu_) = false;

  std::vector<std::thread> threads_;
};

}  // namespace archil::server
