#include "client/disk_client.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/cancel.h"
#include "base/log.h"
#include "base/thread_name.h"
#include "client/call_metrics.h"
#include "proto/features.h"
#include "proto/wire_status.h"

namespace archil::client {

namespace {

using Steady = std::chrono::steady_clock;
using proto::WireStatus;

// A request is sent on at most this many connections that a bad frame from the server broke;
// then it fails with EIO (the server's answer to it cannot be read, most likely every time).
constexpr int kBadFramesPerRequest = 3;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Steady::now().time_since_epoch())
      .count();
}

int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Whether a refusal of the session is for good: the token revoked or wrong (EACCES), the disk or
// its subdirectory gone (ENOENT, ENOTDIR), the disk taken over by another mount (EBUSY), a
// protocol this client does not speak. Anything else may pass and is retried: a server that is
// still starting, out of space, rate-limiting, or that failed inside.
bool RefusedForGood(const Status& s) {
  if (s.code() == Status::Code::kUnavailable) return false;
  switch (ErrnoFor(s)) {
    case EACCES:
    case EPERM:
    case ENOENT:
    case ENOTDIR:
    case EBUSY:
    case EPROTONOSUPPORT:
      return true;
    default:
      return false;
  }
}

Status Interrupted() { return Status::Errno(EINTR, "the caller was interrupted"); }

Reply ToReply(RawReply r) {
  return Reply{r.header.status, std::move(r.body), std::move(r.payload),
               (r.header.flags & proto::kFlagReplayed) != 0};
}

// A refusal while mounting, as the errno the mount command reports (protocol.md §13: "at mount").
Status MountStatus(const Reply& r) {
  Status s = DiskClient::StatusOf(r);
  switch (r.status) {
    case WireStatus::kAuthFailed:
      return Status::Errno(EACCES, s.message());
    case WireStatus::kAuthRateLimited:
      return Status::Errno(EAGAIN, s.message());
    case WireStatus::kUnsupportedVersion:
      return Status::Errno(EPROTONOSUPPORT, s.message());
    default:
      return s;
  }
}

}  // namespace

Status DiskClient::StatusOf(const Reply& r) {
  if (r.status == WireStatus::kOk) return Status::Ok();
  v1::ErrorReply e;
  (void)e.ParseFromString(r.body);
  std::string message(proto::WireStatusName(r.status));
  if (!e.message().empty()) message += ": " + e.message();
  return Status::Errno(proto::ErrnoForWire(r.status), message);
}

DiskClient::DiskClient(DiskClientOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<DiskClient>> DiskClient::Connect(const DiskClientOptions& options) {
  std::unique_ptr<DiskClient> c(new DiskClient(options));
  if (options.metrics != nullptr) c->metrics_ = std::make_unique<CallMetrics>(options.metrics);
  ARCHIL_ASSIGN_OR_RETURN(net::ServerAddress address, net::ParseServerAddress(options.address));
  c->host_port_ = address.host_port;
  c->security_.force_tls = address.tls;
  c->security_.allow_cleartext = options.allow_cleartext && !address.tls;
  c->security_.context = [p = c.get()]() -> Result<std::shared_ptr<net::TlsContext>> {
    MutexLock lock(&p->tls_mu_);
    if (!p->tls_) {
      ARCHIL_ASSIGN_OR_RETURN(p->tls_, net::TlsContext::Client(p->options_.ca_file));
    }
    return p->tls_;
  };
  Result<std::shared_ptr<Channel>> ch = c->Handshake(/*bind=*/false);
  if (!ch.ok()) return ch.status();
  {
    MutexLock lock(&c->mu_);
    c->channel_ = *ch;
    c->last_call_ns_ = NowNs();
  }
  c->keepalive_ = std::thread([p = c.get()] {
    NameThisThread("keepalive");
    p->KeepAlive();
  });
  return c;
}

DiskClient::~DiskClient() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    stop_cv_.SignalAll();
  }
  if (keepalive_.joinable()) keepalive_.join();
}

Result<std::shared_ptr<Channel>> DiskClient::Handshake(bool bind) {
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<Channel> opened,
                          Channel::Open(host_port_, options_.connect_timeout_ms, security_,
                                        [this](const proto::Frame& f) { OnPush(f); }));
  std::shared_ptr<Channel> ch = std::move(opened);
  const Channel::Wait timeout{.timeout_ms = options_.connect_timeout_ms,
                              .cancel = CancelScope::Current()};
  v1::Hello hello;
  hello.mutable_versions()->set_min(1);
  hello.mutable_versions()->set_max(1);
  hello.set_features(proto::kFeatureLseek | proto::kFeatureAttrPuts | proto::kFeatureWritePuts |
                     proto::kFeatureCreatePuts | proto::kFeatureRemovePuts |
                     proto::kFeatureDirPuts | (options_.unstable ? proto::kFeatureUnstable : 0));
  hello.set_software(options_.software);
  ARCHIL_ASSIGN_OR_RETURN(RawReply hr,
                          ch->Call(proto::kTypeHello, hello.SerializeAsString(), {}, timeout));
  Reply hello_reply = ToReply(std::move(hr));
  ARCHIL_RETURN_IF_ERROR(MountStatus(hello_reply));
  if (!bind) {
    v1::HelloReply granted;
    if (!granted.ParseFromString(hello_reply.body)) {
      return Status::Corruption("a hello reply that does not parse");
    }
    unstable_ = (granted.features() & proto::kFeatureUnstable) != 0;
    attr_puts_ = (granted.features() & proto::kFeatureAttrPuts) != 0;
    write_puts_ = attr_puts_ && (granted.features() & proto::kFeatureWritePuts) != 0;
    create_puts_ = write_puts_ && (granted.features() & proto::kFeatureCreatePuts) != 0;
    remove_puts_ = write_puts_ && (granted.features() & proto::kFeatureRemovePuts) != 0;
    dir_puts_ = create_puts_ && (granted.features() & proto::kFeatureDirPuts) != 0;
  }

  if (bind) {
    v1::SessionBind b;
    b.set_token(options_.token);
    {
      MutexLock lock(&mu_);
      b.set_session_id(session_id_);
      b.set_known_verifier(boot_verifier_);
    }
    ARCHIL_ASSIGN_OR_RETURN(RawReply raw,
                            ch->Call(proto::kTypeSessionBind, b.SerializeAsString(), {}, timeout));
    Reply r = ToReply(std::move(raw));
    if (r.status == WireStatus::kOk) {
      v1::SessionBindReply br;
      if (!br.ParseFromString(r.body))
        return Status::Corruption("a bind reply that does not parse");
      MutexLock lock(&mu_);
      if (br.boot_verifier() != boot_verifier_) CheckUnstableSurvived(&br);
      boot_verifier_ = br.boot_verifier();
      if (!ended_.empty()) return Status::Errno(EIO, ended_);
      return ch;
    }
    // The server lost the session (it restarted before the session was durable, or ended it
    // after its lease): create a new one, and resend what is unanswered as new requests.
    if (r.status != WireStatus::kSessionUnknown && r.status != WireStatus::kSessionExpired) {
      return MountStatus(r);
    }
  }

  v1::SessionCreate m;
  m.set_token(options_.token);
  m.set_disk(options_.disk);
  m.set_subdir(options_.subdir);
  m.set_checkpoint(options_.checkpoint);
  if (options_.client_id != std::array<uint8_t, 16>{}) {
    m.set_client_id(std::string(options_.client_id.begin(), options_.client_id.end()));
  }
  m.set_hostname(options_.hostname);
  m.set_mount_path(options_.mount_path);
  m.set_slots(options_.slots);
  m.set_lease_ms(options_.lease_ms);
  m.set_software(options_.software);
  // --force takes the disk over once, at mount; a session created again later (the server lost
  // this one) must not take it back from a mount that displaced this one.
  m.set_force(options_.force && !bind);
  ARCHIL_ASSIGN_OR_RETURN(RawReply raw,
                          ch->Call(proto::kTypeSessionCreate, m.SerializeAsString(), {}, timeout));
  Reply r = ToReply(std::move(raw));
  ARCHIL_RETURN_IF_ERROR(MountStatus(r));
  v1::SessionCreateReply cr;
  if (!cr.ParseFromString(r.body)) return Status::Corruption("a session reply that does not parse");
  MutexLock lock(&mu_);
  if (!bind) {  // the first session: before any other thread can see this client
    root_ino_ = cr.root_ino();
    disk_id_ = cr.disk_id();
    free_slots_.clear();
    for (uint32_t s = cr.slots(); s > 0; --s) free_slots_.push_back(s - 1);
    seqs_.assign(cr.slots(), 0);
  } else {
    ++stats_.recreated;
    ++generation_;
    std::fill(seqs_.begin(), seqs_.end(), 0);
    if (cr.boot_verifier() != boot_verifier_) {
      CheckUnstableSurvived(nullptr);
      if (!ended_.empty()) return Status::Errno(EIO, ended_);
    }
    // The same server ended the session (its lease ran out): what it answered is still in its
    // log, but the new session's slots cannot vouch for it.
    for (const auto& [slot, a] : unstable_by_slot_) {
      unchecked_through_ = std::max(unchecked_through_, a.answer);
    }
    unstable_by_slot_.clear();
  }
  session_id_ = cr.session_id();
  boot_verifier_ = cr.boot_verifier();
  lease_ms_ = cr.lease_ms();
  return ch;
}

Result<std::shared_ptr<Channel>> DiskClient::Ready(const std::shared_ptr<Channel>& broken,
                                                   Steady::time_point deadline) {
  while (true) {
    bool attempt = false;
    {
      MutexLock lock(&mu_);
      if (!ended_.empty()) return Status::Errno(EIO, "the server ended the session: " + ended_);
      if (channel_ && channel_ != broken && !channel_->broken()) return channel_;
      const Steady::time_point now = Steady::now();
      if (!reconnecting_ && now >= next_attempt_) {
        reconnecting_ = attempt = true;
      } else if (now >= deadline) {
        return Status::Unavailable("no disk server answered at " + options_.address + " for " +
                                   std::to_string(options_.retry_for_ms) + " ms");
      } else {
        Steady::time_point until = std::min(deadline, now + std::chrono::milliseconds(100));
        if (!reconnecting_) until = std::min(until, next_attempt_);
        ++stats_.waiting;
        reconnect_cv_.WaitFor(&mu_,
                              std::chrono::duration_cast<std::chrono::milliseconds>(until - now) +
                                  std::chrono::milliseconds(1));
        --stats_.waiting;
      }
    }
    if (!attempt) {
      if (CancelScope::CurrentCancelled()) return Interrupted();
      continue;
    }
    Result<std::shared_ptr<Channel>> ch = Handshake(/*bind=*/true);
    MutexLock lock(&mu_);
    reconnecting_ = false;
    reconnect_cv_.SignalAll();
    if (ch.ok()) {
      channel_ = *ch;
      ++stats_.reconnects;
      stats_.unreachable_since_ms = 0;
      backoff_ = std::chrono::milliseconds(10);
      next_attempt_ = Steady::time_point();
      return ch;
    }
    if (ErrnoFor(ch.status()) == EINTR) return ch.status();
    if (RefusedForGood(ch.status())) {
      // The server refuses the session now (the disk was deleted, the token revoked): what was
      // mounted is gone, and applications see EIO (protocol.md §11).
      return Status::Errno(EIO, "the session ended: " + ch.status().message());
    }
    if (stats_.unreachable_since_ms == 0) stats_.unreachable_since_ms = UnixMillis();
    next_attempt_ = Steady::now() + backoff_;
    backoff_ = std::min(backoff_ * 2, std::chrono::milliseconds(500));
  }
}

void DiskClient::OnPush(const proto::Frame& push) {
  if (push.header.type != proto::kTypeGoodbye) return;  // no other push is sent to this client yet
  v1::Goodbye g;
  if (!g.ParseFromString(push.body) || !g.end_session()) return;  // not final: reconnect later
  MutexLock lock(&mu_);
  ended_ = g.reason().empty() ? "no reason given" : g.reason();
}

Result<uint32_t> DiskClient::AcquireSlot() {
  MutexLock lock(&mu_);
  while (free_slots_.empty()) {
    slot_free_.WaitFor(&mu_, std::chrono::milliseconds(Channel::kCancelPollMs));
    if (free_slots_.empty() && CancelScope::CurrentCancelled()) return Interrupted();
  }
  const uint32_t s = free_slots_.back();
  free_slots_.pop_back();
  return s;
}

void DiskClient::ReleaseSlot(uint32_t slot, std::optional<uint64_t> unstable_seq) {
  MutexLock lock(&mu_);
  if (unstable_seq) unstable_by_slot_[slot] = UnstableAnswer{*unstable_seq, ++unstable_answers_};
  free_slots_.push_back(slot);
  slot_free_.Signal();
}

namespace {

// The bytes of file data a Mut carries (its write puts, protocol.md §5.3.2).
size_t CarriedBytes(const v1::Mut* mut) {
  size_t n = 0;
  if (mut != nullptr) {
    for (const v1::WritePut& w : mut->writes()) n += w.data().size();
  }
  return n;
}

}  // namespace

Result<Reply> DiskClient::Call(uint16_t type, proto::Message& request, v1::Mut* mut,
                               std::string_view payload) {
  const Steady::time_point start = Steady::now();
  const Steady::time_point deadline = options_.retry_for_ms > 0
                                          ? start + std::chrono::milliseconds(options_.retry_for_ms)
                                          : Steady::time_point::max();
  return Counted(type, payload.size(), CarriedBytes(mut), start,
                 CallUntil(deadline, type, request, mut, payload));
}

Result<Reply> DiskClient::Counted(uint16_t type, size_t payload_bytes, size_t carried_bytes,
                                  Steady::time_point start, Result<Reply> reply) {
  if (metrics_) {
    metrics_->Count(type, reply, payload_bytes, carried_bytes,
                    std::chrono::duration<double>(Steady::now() - start).count());
  }
  return reply;
}

Result<Reply> DiskClient::CallWithin(int budget_ms, uint16_t type, proto::Message& request,
                                     v1::Mut* mut, std::string_view payload) {
  const Steady::time_point start = Steady::now();
  Steady::time_point deadline = start + std::chrono::milliseconds(budget_ms);
  if (options_.retry_for_ms > 0) {
    deadline = std::min(deadline, start + std::chrono::milliseconds(options_.retry_for_ms));
  }
  return Counted(type, payload.size(), CarriedBytes(mut), start,
                 CallUntil(deadline, type, request, mut, payload));
}

Status DiskClient::WaitDelay(uint32_t ms, Steady::time_point deadline, const std::string& why) {
  {
    MutexLock lock(&mu_);
    ++stats_.delays;
  }
  const Steady::time_point until = Steady::now() + std::chrono::milliseconds(ms);
  while (Steady::now() < until) {
    if (Steady::now() >= deadline) {
      return Status::Unavailable("the server kept delaying the request: " + why);
    }
    if (CancelScope::CurrentCancelled()) return Interrupted();
    std::this_thread::sleep_for(
        std::min<Steady::duration>(std::chrono::milliseconds(50), until - Steady::now()));
  }
  return Status::Ok();
}

void DiskClient::NoteBadFrame(const std::shared_ptr<Channel>& ch) {
  MutexLock lock(&mu_);
  if (last_bad_frame_.lock() == ch) return;  // another caller on it counted it
  last_bad_frame_ = ch;
  ++stats_.bad_frames;
  next_attempt_ = std::max(next_attempt_, Steady::now() + bad_frame_backoff_);
  bad_frame_backoff_ = std::min(bad_frame_backoff_ * 2, std::chrono::milliseconds(5000));
}

Result<Reply> DiskClient::CallUntil(Steady::time_point deadline, uint16_t type,
                                    proto::Message& request, v1::Mut* mut,
                                    std::string_view payload) {
  uint32_t slot = 0;
  if (mut) {
    ARCHIL_ASSIGN_OR_RETURN(slot, AcquireSlot());
  }
  uint64_t generation = UINT64_MAX, seq = 0;
  bool sent = false;
  int bad_frames = 0;  // channels this request was on when a bad frame broke them
  std::shared_ptr<Channel> broken;
  const Channel::Wait wait{.timeout_ms = options_.call_timeout_ms,
                           .give_up = deadline,
                           .cancel = CancelScope::Current()};
  while (true) {
    Result<std::shared_ptr<Channel>> ch = Ready(broken, deadline);
    if (!ch.ok()) {
      if (mut && !sent) ReleaseSlot(slot);  // a slot whose request may be running stays taken
      return ch.status();
    }
    if (mut) {
      MutexLock lock(&mu_);
      if (generation != generation_) {  // first send, or the session was created anew
        generation = generation_;
        seq = ++seqs_[slot];
      }
      mut->set_slot(slot);
      mut->set_seq(seq);
    }
    if (sent) {
      MutexLock lock(&mu_);
      ++stats_.retries;
    }
    Result<RawReply> raw = (*ch)->Call(type, request.SerializeAsString(), payload, wait);
    sent = true;
    if (!raw.ok()) {
      // The caller stopped waiting (its deadline, or it was interrupted) on a channel that is
      // still whole; any other failure broke the channel, and the request goes again.
      if (!(*ch)->broken()) return raw.status();
      broken = *ch;
      if ((*ch)->broken_by_bad_frame()) {
        NoteBadFrame(*ch);
        // A request whose answer keeps arriving unreadable is not sent forever (a slot whose
        // request may have run stays taken, as after any unknown outcome).
        if (++bad_frames >= kBadFramesPerRequest) {
          return Status::Errno(EIO, "the server's answer could not be read " +
                                        std::to_string(bad_frames) +
                                        " times: " + raw.status().message());
        }
      }
      continue;  // Ready gives up at the deadline
    }
    {
      MutexLock lock(&mu_);
      last_call_ns_ = NowNs();
      bad_frame_backoff_ = std::chrono::milliseconds(10);
    }
    if (raw->header.status == WireStatus::kDelay) {
      // Nothing ran (the server holds writes back: its lease on its bucket lapsed, say): the
      // same request again after the wait it asks for, until the deadline; the slot stays.
      v1::ErrorReply e;
      const uint32_t ms = e.ParseFromString(raw->body) ? e.retry_after_ms() : 0;
      Status waited = WaitDelay(std::clamp<uint32_t>(ms, 10, 5000), deadline, e.message());
      if (!waited.ok()) {
        if (mut) ReleaseSlot(slot);
        return waited;
      }
      continue;
    }
    if (mut) {
      // Attribute puts it carried were committed without a sync unless the request's own synced
      // commit followed them: an error answer is unstable as far as they go (protocol.md §5.3.2).
      const bool ok = raw->header.status == WireStatus::kOk;
      const bool carried = mut->puts_size() > 0 || mut->writes_size() > 0;
      const bool unstable = (mut->unstable() && ok) || (carried && !ok);
      ReleaseSlot(slot, unstable ? std::optional<uint64_t>(seq) : std::nullopt);
    }
    if (raw->header.status == WireStatus::kSessionUnknown) {
      return Status::Unavailable("the server ended this session (disk deleted or token revoked)");
    }
    return ToReply(std::move(raw).value());
  }
}

Result<v1::CheckpointCreateReply> DiskClient::Checkpoint(std::string_view name) {
  v1::CheckpointCreate m;
  m.set_name(std::string(name));
  return CallAs<v1::CheckpointCreateReply>(proto::kTypeCheckpointCreate, m, m.mutable_mut());
}

Status DiskClient::Goodbye() {
  v1::Goodbye g;
  g.set_end_session(true);
  std::shared_ptr<Channel> ch;
  {
    MutexLock lock(&mu_);
    ch = channel_;
  }
  if (!ch) return Status::Ok();
  ARCHIL_ASSIGN_OR_RETURN(RawReply r, ch->Call(proto::kTypeGoodbye, g.SerializeAsString(), {},
                                               options_.call_timeout_ms));
  return StatusOf(ToReply(std::move(r)));
}

Status DiskClient::Commit(int budget_ms) {
  {
    MutexLock lock(&mu_);
    if (unstable_answers_ == committed_through_) return Status::Ok();
  }
  return CommitVia([&] {
    v1::Commit m;
    Result<Reply> r =
        budget_ms > 0 ? CallWithin(budget_ms, proto::kTypeCommit, m) : Call(proto::kTypeCommit, m);
    return ParseAs<v1::CommitReply>(std::move(r)).status();
  });
}

Status DiskClient::CommitVia(const std::function<Status()>& send) {
  uint64_t covers = 0;
  {
    MutexLock lock(&mu_);
    covers = unstable_answers_;
  }
  ARCHIL_RETURN_IF_ERROR(send());
  MutexLock lock(&mu_);
  // What was answered after the COMMIT went out may not be covered by it.
  committed_through_ = std::max(committed_through_, covers);
  const uint64_t through = committed_through_;
  std::erase_if(unstable_by_slot_, [through](const auto& e) { return e.second.answer <= through; });
  return Status::Ok();
}

uint64_t DiskClient::UnstablePending() const {
  MutexLock lock(&mu_);
  return unstable_answers_ - committed_through_;
}

void DiskClient::CheckUnstableSurvived(const v1::SessionBindReply* bound) {
  uint64_t lost = unchecked_through_ > committed_through_ ? 1 : 0;  // at least one
  for (const auto& [slot, answer] : unstable_by_slot_) {
    // The slot record is written with the mutation (one batch): its seq survived iff it did.
    const bool kept = bound != nullptr && slot < static_cast<uint32_t>(bound->slot_seq_size()) &&
                      bound->slot_seq(static_cast<int>(slot)) >= answer.seq;
    lost += kept ? 0 : 1;
  }
  if (lost == 0) return;
  ended_ = "the server restarted without " + std::to_string(lost) +
           " of the operations it had answered this mount and no fsync had made durable yet "
           "(its machine went down before its sync); the disk holds every operation before "
           "them: unmount and mount again";
  ARCHIL_LOG(kError) << "disk client: " << ended_;
}

uint64_t DiskClient::boot_verifier() const {
  MutexLock lock(&mu_);
  return boot_verifier_;
}

ClientStats DiskClient::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

uint64_t DiskClient::SessionsRecreated() const {
  MutexLock lock(&mu_);
  return stats_.recreated;
}

void DiskClient::KeepAlive() {
  while (true) {
    std::shared_ptr<Channel> ch;
    {
      MutexLock lock(&mu_);
      const auto period = std::chrono::milliseconds(lease_ms_ / 3);
      if (!stop_) stop_cv_.WaitFor(&mu_, period);
      if (stop_) return;
      const bool idle = NowNs() - last_call_ns_ >= period.count() * 1'000'000;
      if (idle && channel_ && !channel_->broken()) {
        ch = channel_;
        last_call_ns_ = NowNs();
      }
    }
    // Any frame renews the lease (protocol.md §10.1); a lost PING just waits for the next call
    // to reconnect.
    if (ch)
      (void)ch->Call(proto::kTypePing, v1::Ping().SerializeAsString(), {},
                     options_.call_timeout_ms);
  }
}

}  // namespace archil::client
