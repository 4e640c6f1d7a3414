// DiskClient: a mount's session with a disk server (docs/protocol.md §5.2, §7, §8), the library
// the FUSE client uses. It authenticates, creates the session, and carries requests with the
// exactly-once rule: each mutating request takes a slot and the slot's next seq, and keeps them
// across retries.
//
// Riding through failures (§8.3). When the connection breaks (the server restarted, the network
// dropped, a call timed out), the calls in flight reconnect, bind the session again and resend
// their requests with the same (slot, seq); the server answers from its reply cache what it had
// already applied, and applies the rest. If the server no longer knows the session (it was never
// durable, or it ended), the client creates a new one and resends the unanswered requests as new
// ones. A call gives up (Unavailable) only when no server answers for `retry_for_ms` (never, if
// it is 0), with EIO when the server refuses the session for good (disk deleted, token revoked:
// any other refusal, as from a server that is still starting, is retried), or with EINTR when
// the thread's CancelScope (base/cancel.h) says its caller is gone.
// Errors the server returns (ENOENT, EEXIST...) are answers, not failures: they are returned at
// once.
//
// Thread-safety: safe for concurrent use; calls run in parallel, up to `slots` mutations at once.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "client/channel.h"
#include "proto/messages.h"

namespace archil::metrics {
class Registry;
}

namespace archil::client {

class CallMetrics;  // call_metrics.h

struct DiskClientOptions {
  // The disk server, "host:port". The connection is TLS when the server is on another machine
  // (its address is not loopback) and cleartext on this one (docs/protocol.md §2); under TLS
  // the server's certificate must name the host and chain to `ca_file` (the system's trust
  // store if empty). "tls://host:port" asks for TLS on loopback too.
  std::string address = "127.0.0.1:8421";
  std::string ca_file;
  bool allow_cleartext = false;  // cleartext to another machine: the token travels bare
  std::string token;             // the disk token, "adt_..."
  std::string disk;              // disk id or name; "" = the token's disk
  std::string subdir;            // mount a subdirectory ("" = the root)
  std::string checkpoint;        // a read-only view of this checkpoint ("" = the disk's head)
  std::string hostname;
  std::string mount_path;
  std::array<uint8_t, 16> client_id{};  // this host's mount point (protocol.md §10.2); zeros = none
  // With a client id: take the disk over from a mount elsewhere (fencing it) at the first
  // session; without, a disk mounted elsewhere is refused (DELEG_CONFLICT, EBUSY).
  bool force = false;
  uint32_t slots = 64;
  uint32_t lease_ms = 0;  // 0: the server's default
  int connect_timeout_ms = 2000;
  int call_timeout_ms = 30000;
  // How long a call waits for a server that does not answer before it fails (Unavailable);
  // 0: forever (a hard mount, the mount daemon's default; `archil mount --timeout` bounds it).
  int retry_for_ms = 60000;
  std::string software = "archil-client";
  // Ask for feature UNSTABLE (protocol.md §8.2): then Unstable() is true and the caller may send
  // mutations answered before the server's sync, made durable by Commit().
  bool unstable = false;
  // Where the client counts its calls (archil_client_* in docs/operations.md); null: nowhere.
  // REQUIRES: outlives the client.
  metrics::Registry* metrics = nullptr;
};

struct Reply {
  proto::WireStatus status = proto::WireStatus::kOk;
  std::string body;  // the <Type>Reply, or an ErrorReply
  std::string payload;
  bool replayed = false;  // answered from the server's reply cache
};

struct ClientStats {
  uint64_t reconnects = 0;  // connections opened after the first
  uint64_t retries = 0;     // requests sent again after a lost connection
  uint64_t recreated = 0;   // sessions created again because the server lost the old one
  uint64_t delays = 0;      // requests the server answered DELAY (sent again after a wait)
  // Since when (CLOCK_REALTIME, ms) no server has answered a reconnection; 0 while one does.
  int64_t unreachable_since_ms = 0;
  uint64_t waiting = 0;     // calls waiting for a server to answer a reconnection, now
  uint64_t bad_frames = 0;  // connections broken by a frame from the server that failed its checks
};

class DiskClient {
 public:
  // Connects, says HELLO and creates the session. The server's refusal as its errno:
  // AUTH_FAILED EACCES, DISK_NOT_FOUND ENOENT, CLIENT_ID_IN_USE EBUSY...; Unavailable if no
  // server answers within connect_timeout_ms.
  static Result<std::unique_ptr<DiskClient>> Connect(const DiskClientOptions& options);
  ~DiskClient();  // closes the connection; the session stays until it expires (or Goodbye)

  // Sends `request` of `type` and returns the reply. For a mutating type, `mut` is the request's
  // Mut field: the slot and seq are filled in here. Unavailable (and the request's effect
  // unknown) only after retry_for_ms without an answering server, or if the session was ended
  // by the server (disk deleted, token revoked).
  Result<Reply> Call(uint16_t type, proto::Message& request, v1::Mut* mut = nullptr,
                     std::string_view payload = {}) ARCHIL_EXCLUDES(mu_);
  // Call, given up after `budget_ms` (Unavailable) however long retry_for_ms is: for answers with
  // a fallback (statfs's last known figures), and the daemon's periodic pass (a mutation given up
  // has an unknown outcome, as after retry_for_ms).
  Result<Reply> CallWithin(int budget_ms, uint16_t type, proto::Message& request,
                           v1::Mut* mut = nullptr, std::string_view payload = {})
      ARCHIL_EXCLUDES(mu_);
  // Call, then the reply body parsed as `R` when OK, or the status as an errno error
  // (Status::Errno(ErrnoForWire(status), message)).
  template <typename R>
  Result<R> CallAs(uint16_t type, proto::Message& request, v1::Mut* mut = nullptr,
                   std::string_view payload = {}, std::string* payload_out = nullptr) {
    return ParseAs<R>(Call(type, request, mut, payload), payload_out);
  }
  // A reply (or the failure to get one) as `R`: the reply's status as an errno error when not
  // OK, Corruption if its body does not parse.
  template <typename R>
  static Result<R> ParseAs(Result<Reply> reply, std::string* payload_out = nullptr) {
    ARCHIL_ASSIGN_OR_RETURN(Reply r, std::move(reply));
    ARCHIL_RETURN_IF_ERROR(StatusOf(r));
    R out;
    if (!out.ParseFromString(r.body)) return Status::Corruption("a reply that does not parse");
    if (payload_out) *payload_out = std::move(r.payload);
    return out;
  }
  // Creates checkpoint `name` of the disk (protocol.md §5.8), exactly once like any mutation:
  // it holds every operation this client had answered before the call (operations still in
  // flight on other threads may or may not be in it). EEXIST if the name is taken, EINVAL if it
  // is not 1-100 of [A-Za-z0-9._-].
  Result<v1::CheckpointCreateReply> Checkpoint(std::string_view name) ARCHIL_EXCLUDES(mu_);
  // Ends the session on the server (unmount): its open files and reply cache go.
  Status Goodbye() ARCHIL_EXCLUDES(mu_);

  // Whether the server granted UNSTABLE (and options.unstable asked for it): a mutation whose
  // Mut has `unstable` set is then answered once applied, before the server's WAL sync.
  bool Unstable() const { return unstable_; }
  // Whether the server granted ATTR_PUTS (protocol.md §5.3.2): it applies the attribute changes a
  // mutation's Mut carries, and serves PUT_ATTRS.
  bool AttrPuts() const { return attr_puts_; }
  // Whether it also granted WRITE_PUTS: it applies the writes a mutation's Mut carries.
  bool WritePuts() const { return write_puts_; }
  // Whether it also granted CREATE_PUTS: it grants inode numbers (INO_GRANT) and applies the
  // creates a mutation's Mut carries (protocol.md §5.3.2-5.3.3).
  bool CreatePuts() const { return create_puts_; }
  // Whether it also granted REMOVE_PUTS: it applies the unlinks a mutation's Mut carries.
  bool RemovePuts() const { return remove_puts_; }
  // Whether it also granted DIR_PUTS: a create it applies may make a directory.
  bool DirPuts() const { return dir_puts_; }
  // Makes every unstable mutation answered before the call durable (one COMMIT round trip; none
  // if there is none). If the server restarts and has lost one (its machine went down before
  // its sync), the session is ended: every later call fails with EIO, so that the disk holds a
  // prefix of this client's operations and never a later one without the lost ones
  // (protocol.md §8.3). `budget_ms` > 0: Unavailable after that long without an answer, however
  // long retry_for_ms is (the daemon's periodic commit and its last one at unmount).
  Status Commit(int budget_ms = 0) ARCHIL_EXCLUDES(mu_);
  // As Commit, with `send` in place of the COMMIT: a request the server answers only once every
  // mutation answered before it is durable (PUT_ATTRS with `commit`, protocol.md §5.3.2).
  Status CommitVia(const std::function<Status()>& send) ARCHIL_EXCLUDES(mu_);
  // Unstable mutations answered and not yet covered by a Commit.
  uint64_t UnstablePending() const ARCHIL_EXCLUDES(mu_);

  uint64_t root_ino() const { return root_ino_; }
  const std::string& disk_id() const { return disk_id_; }
  uint64_t boot_verifier() const ARCHIL_EXCLUDES(mu_);
  ClientStats stats() const ARCHIL_EXCLUDES(mu_);
  // stats().recreated alone (asked at every create the mount answers itself).
  uint64_t SessionsRecreated() const ARCHIL_EXCLUDES(mu_);
  // The status of a reply as a Status: OK, or Errno(ErrnoForWire(status), its message).
  static Status StatusOf(const Reply& r);

 private:
  explicit DiskClient(DiskClientOptions options);
  // A working channel: the current one, or (if `broken` is it, or it is broken) a new one with
  // the session bound again, or a new session. Errors: a refusal, or Unavailable at `deadline`.
  Result<std::shared_ptr<Channel>> Ready(const std::shared_ptr<Channel>& broken,
                                         std::chrono::steady_clock::time_point deadline)
      ARCHIL_EXCLUDES(mu_);
  // Waits `ms` after a DELAY answer: Unavailable at `deadline`, Cancelled if the caller is killed.
  Status WaitDelay(uint32_t ms, std::chrono::steady_clock::time_point deadline,
                   const std::string& why) ARCHIL_EXCLUDES(mu_);
  // `ch` broke on a bad frame from the server: no reconnection before a backoff that doubles
  // from 10 ms to 5 s with each such break, reset by the next reply that reads well.
  // Counts a call that began at `start` (metrics_), and returns its reply.
  Result<Reply> Counted(uint16_t type, size_t payload_bytes, size_t carried_bytes,
                        std::chrono::steady_clock::time_point start, Result<Reply> reply);
  void NoteBadFrame(const std::shared_ptr<Channel>& ch) ARCHIL_EXCLUDES(mu_);
  Result<Reply> CallUntil(std::chrono::steady_clock::time_point deadline, uint16_t type,
                          proto::Message& request, v1::Mut* mut, std::string_view payload)
      ARCHIL_EXCLUDES(mu_);
  // HELLO and SESSION_CREATE (or SESSION_BIND if `bind`) on a new channel.
  Result<std::shared_ptr<Channel>> Handshake(bool bind) ARCHIL_EXCLUDES(mu_);
  // A free slot; EINTR if the caller is cancelled while none is free.
  Result<uint32_t> AcquireSlot() ARCHIL_EXCLUDES(mu_);
  // `unstable_seq`: the seq of an unstable mutation the slot's request was answered OK for,
  // recorded for the loss check under the same lock.
  void ReleaseSlot(uint32_t slot, std::optional<uint64_t> unstable_seq = std::nullopt)
      ARCHIL_EXCLUDES(mu_);
  void KeepAlive() ARCHIL_EXCLUDES(mu_);
  void OnPush(const proto::Frame& push) ARCHIL_EXCLUDES(mu_);

  const DiskClientOptions options_;
  std::string host_port_;  // options_.address without its scheme
  Channel::Security security_;
  Mutex tls_mu_;
  std::shared_ptr<net::TlsContext> tls_ ARCHIL_GUARDED_BY(tls_mu_);  // made on first need
  uint64_t root_ino_ = 0;
  std::string disk_id_;

  mutable Mutex mu_;
  CondVar slot_free_{&mu_};
  CondVar stop_cv_{&mu_};
  // Reconnection: one caller tries a handshake at a time (`reconnecting_`), the others wait for
  // its outcome on `reconnect_cv_`; after a failure nobody tries again before `next_attempt_`
  // (an exponential backoff from 10 ms to 500 ms, reset by a success).
  CondVar reconnect_cv_{&mu_};
  bool reconnecting_ ARCHIL_GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point next_attempt_ ARCHIL_GUARDED_BY(mu_);
  std::chrono::milliseconds backoff_ ARCHIL_GUARDED_BY(mu_){10};
  std::chrono::milliseconds bad_frame_backoff_ ARCHIL_GUARDED_BY(mu_){10};
  std::weak_ptr<Channel> last_bad_frame_ ARCHIL_GUARDED_BY(mu_);  // counted once per channel
  std::shared_ptr<Channel> channel_ ARCHIL_GUARDED_BY(mu_);
  std::string session_id_ ARCHIL_GUARDED_BY(mu_);
  uint64_t boot_verifier_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t generation_ ARCHIL_GUARDED_BY(mu_) = 0;     // bumped when the session is created anew
  std::vector<uint64_t> seqs_ ARCHIL_GUARDED_BY(mu_);  // last seq used, per slot
  std::vector<uint32_t> free_slots_ ARCHIL_GUARDED_BY(mu_);
  uint32_t lease_ms_ ARCHIL_GUARDED_BY(mu_) = 15000;
  int64_t last_call_ns_ ARCHIL_GUARDED_BY(mu_) = 0;
  bool stop_ ARCHIL_GUARDED_BY(mu_) = false;
  // Set by the server's final GOODBYE push (disk deleted, token revoked): calls fail with EIO
  // and no reconnection is tried.
  std::string ended_ ARCHIL_GUARDED_BY(mu_);
  // Unstable answers are numbered 1, 2, ... (unstable_answers_ is the last); those numbered up
  // to committed_through_ are durable (a COMMIT sent after them was answered). For the ones
  // after it, per slot of the current session, the seq and number of the last one: a restarted
  // server's slot records say whether it survived. Those of an earlier session of this client
  // (the server ended it, its lease ran out) can no longer be checked by slot: numbered up to
  // unchecked_through_.
  struct UnstableAnswer {
    uint64_t seq = 0;
    uint64_t answer = 0;
  };
  bool unstable_ = false;     // set by the first handshake, before other threads see the client
  bool attr_puts_ = false;    // likewise
  bool write_puts_ = false;   // likewise
  bool create_puts_ = false;  // likewise
  bool remove_puts_ = false;  // likewise
  bool dir_puts_ = false;     // likewise
  std::map<uint32_t, UnstableAnswer> unstable_by_slot_ ARCHIL_GUARDED_BY(mu_);
  uint64_t unstable_answers_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t committed_through_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t unchecked_through_ ARCHIL_GUARDED_BY(mu_) = 0;
  // After a reconnection to a server whose boot verifier changed (`bound`: its bind reply; null:
  // it no longer knew the session): ends the session (ended_) if an unstable answer not yet
  // committed may be gone (not in its slot records, or not checkable).
  void CheckUnstableSurvived(const v1::SessionBindReply* bound) ARCHIL_REQUIRES(mu_);
  ClientStats stats_ ARCHIL_GUARDED_BY(mu_);
  std::unique_ptr<CallMetrics> metrics_;  // set at Connect when options_.metrics is
  std::thread keepalive_;
};

}  // namespace archil::client
