#include "server/disk_server.h"

#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "base/address_key.h"
#include "base/log.h"
#include "base/random.h"
#include "base/thread_name.h"
#include "proto/messages.h"
#include "proto/validate.h"
#include "server/attr_convert.h"
#include "server/inode_order.h"
#include "server/requests.h"

namespace archil::server {

namespace {

using proto::As;
using proto::WireStatus;

}  // namespace

DiskServer::DiskServer(const DiskServerOptions& options, engine::ServedDisks* engine,
                       Authority* authority, const Clock* clock)
    : options_(options),
      engine_(engine),
      authority_(authority),
      clock_(clock),
      registry_(engine),
      budget_({.total = options.max_buffered_bytes_total,
               .per_disk = options.max_buffered_bytes_per_disk,
               .per_connection = options.max_inflight_bytes_per_connection}) {
  if (options.share_cpus >= 0) {
    const double cpus = options.share_cpus > 0 ? options.share_cpus : CpuShare::AvailableCpus();
    share_ = std::make_unique<CpuShare>(CpuShare::Options{
        .cpus = cpus, .admission_cpus = cpus * std::max(options.admission_share, 0.001)});
  }
}

Result<std::unique_ptr<DiskServer>> DiskServer::Start(const DiskServerOptions& options,
                                                      engine::ServedDisks* engine,
                                                      Authority* authority, const Clock* clock) {
  std::unique_ptr<DiskServer> s(new DiskServer(options, engine, authority, clock));
  ARCHIL_ASSIGN_OR_RETURN(s->listener_, net::Listen(options.listen));
  ARCHIL_ASSIGN_OR_RETURN(s->address_, net::LocalAddress(s->listener_.get()));
  s->RegisterMetrics();
  s->server_id_.resize(16);
  ARCHIL_RETURN_IF_ERROR(SecureRandomBytes(s->server_id_.data(), s->server_id_.size()));
  s->epoll_ = net::Fd(::epoll_create1(EPOLL_CLOEXEC));
  s->wake_ = net::Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!s->epoll_.valid() || !s->wake_.valid()) return Status::Errno(errno, "epoll/eventfd");
  for (int fd : {s->listener_.get(), s->wake_.get()}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(s->epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      return Status::Errno(errno, "epoll_ctl");
    }
  }
  // A restarted server knows every session it had before it answers anyone: a mount that
  // reconnects at once must find its session, never a refusal (docs/protocol.md §8.3).
  const size_t restored = s->registry_.LoadAll();
  if (restored > 0) ARCHIL_LOG(kInfo) << "server: " << restored << " stored sessions loaded";
  for (int i = 0; i < std::max(options.workers, 1); ++i) {
    s->threads_.emplace_back([p = s.get(), i] {
      NameThisThread("disk-pool-" + std::to_string(i));
      p->Run();
    });
  }
  ARCHIL_LOG(kInfo) << "server: serving mounts on " << s->address_;
  return s;
}

DiskServer::~DiskServer() { Stop(); }

void DiskServer::Stop() {
  if (stop_.exchange(true)) return;
  Wake();
  {
    MutexLock lock(&lf_mu_);
    lf_cv_.SignalAll();
  }
  for (std::thread& t : threads_) t.join();  // they run what is queued first
  registry_.CloseAll();
  MutexLock io(&io_mu_);
  for (auto& [fd, c] : conns_) {
    c->Shutdown();
    c->Unbind();
  }
  conns_.clear();
  pending_.clear();
  pending_order_.clear();
  connection_count_ = 0;
}

void DiskServer::Wake() {
  const uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

void DiskServer::Run() {
  while (true) {
    Job job;
    {
      MutexLock lock(&lf_mu_);
      while (true) {
        ReleaseHeld(clock_->MonotonicNanos());
        if (!jobs_.empty()) {
          job = std::move(jobs_.front());
          jobs_.pop_front();
          break;
        }
        if (stop_) return;
        if (!leading_) {
          leading_ = true;
          break;
        }
        if (held_.empty()) {
          lf_cv_.Wait(&lf_mu_);
        } else {
          const int64_t until = held_.begin()->first - clock_->MonotonicNanos();
          lf_cv_.WaitFor(&lf_mu_, std::chrono::nanoseconds(std::max<int64_t>(until, 0)));
        }
      }
    }
    if (job.run) {
      RunOrHold(std::move(job));
      continue;
    }
    // This thread leads: it reads sockets until some request is ready, hands the lead to another
    // thread, and runs the first request itself; the others go to the followers.
    std::vector<Job> ready;
    while (ready.empty() && !stop_) ready = Lead();
    Job mine;
    const size_t wake = std::max<size_t>(ready.size(), 1);  // a new leader, and one per job queued
    {
      MutexLock lock(&lf_mu_);
      leading_ = false;
      if (!ready.empty()) mine = std::move(ready.front());
      for (size_t i = 1; i < ready.size(); ++i) jobs_.push_back(std::move(ready[i]));
    }
    // Signalled after the unlock: a follower woken inside it would run only to block on the
    // mutex (two context switches per request on a server with one CPU).
    for (size_t i = 0; i < wake; ++i) lf_cv_.Signal();
    if (mine.run) RunOrHold(std::move(mine));
  }
}

void DiskServer::RunOrHold(Job job) {
  if (share_ && job.disk != 0 && !stop_) {
    const int64_t now = clock_->MonotonicNanos();
    const int64_t release = share_->ReleaseTime(job.disk, now);
    if (release > now) {
      ++held_count_;
      {
        MutexLock lock(&lf_mu_);
        held_.emplace(release, std::move(job));
      }
      lf_cv_.Signal();  // a follower waits for the earliest release
      return;
    }
  }
  const int64_t cpu_before = share_ ? CpuShare::ThreadCpuNanos() : 0;
  job.run();
  if (share_ && job.disk != 0) {
    share_->Charge(job.disk, CpuShare::ThreadCpuNanos() - cpu_before, clock_->MonotonicNanos());
  }
}

void DiskServer::ReleaseHeld(int64_t now_ns) {
  while (!held_.empty() && (stop_ || held_.begin()->first <= now_ns)) {
    jobs_.push_back(std::move(held_.begin()->second));
    held_.erase(held_.begin());
  }
}

std::vector<DiskServer::Job> DiskServer::Lead() {
  MutexLock io(&io_mu_);
  epoll_event events[64];
  // Connections whose stream holds received bytes back get no epoll event: read them first.
  std::vector<ConnPtr> again = std::exchange(again_, {});
  for (const ConnPtr& c : again) {
    if (auto it = conns_.find(c->fd()); it != conns_.end() && it->second == c) ReadFrom(c);
  }
  ResumeAccepting(clock_->MonotonicNanos());
  int timeout_ms = again_.empty() ? 250 : 0;
  if (accept_paused_until_ns_ != 0) {
    const int64_t left = accept_paused_until_ns_ - clock_->MonotonicNanos();
    timeout_ms = static_cast<int>(
        std::min<int64_t>(timeout_ms, std::max<int64_t>(0, (left + 999'999) / 1'000'000)));
  }
  const int n = ::epoll_wait(epoll_.get(), events, 64, timeout_ms);
  for (int i = 0; i < n; ++i) {
    const int fd = events[i].data.fd;
    if (fd == listener_.get()) {
      Admit();
    } else if (fd == wake_.get()) {
      uint64_t v;
      (void)!::read(wake_.get(), &v, sizeof v);
      std::vector<ConnPtr> resume;
      {
        MutexLock lock(&resume_mu_);
        resume.swap(resume_);
      }
      for (const ConnPtr& c : resume) ResumeReading(c);
    } else if (auto it = conns_.find(fd); it != conns_.end()) {
      ConnPtr c = it->second;
      // A paused connection is watched for its hang-up only (level-triggered: left open, the
      // event would come back on every round, a spinning leader).
      if (c->reading_paused && (events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
        ARCHIL_LOG(kDebug) << "server: " << c->peer() << ": hung up while paused; closing";
        Close(c);
        continue;
      }
      ReadFrom(c);
    } else if (pending_.contains(fd)) {
      ChooseStream(fd);
    }
  }
  const int64_t now = clock_->MonotonicNanos();
  if (now - last_sweep_ns_ > 250'000'000) {
    Sweep();
    last_sweep_ns_ = now;
  }
  return std::exchange(ready_, {});
}

void DiskServer::Close(const ConnPtr& c) {
  auto it = conns_.find(c->fd());
  if (it == conns_.end() || it->second != c) return;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c->fd(), nullptr);
  if (c->counted_unauthenticated) UncountUnauthenticated(c->peer());
  c->Shutdown();
  c->Unbind();
  // The frame it was reading will not come; requests it has queued discharge as they finish.
  Discharge({c->charged_disk, std::exchange(c->charged_bytes, 0)});
  c->stash.clear();
  c->stash.shrink_to_fit();
  {
    MutexLock lock(&resume_mu_);
    auto drop = [&](std::deque<Starved>& q) {
      std::erase_if(q, [&](const Starved& w) { return w.conn == c; });
    };
    drop(starved_for_total_);
    if (auto s = starved_by_disk_.find(c->budget_disk); s != starved_by_disk_.end()) {
      drop(s->second);
      if (s->second.empty()) starved_by_disk_.erase(s);
    }
  }
  conns_.erase(it);
  --connection_count_;
}

void DiskServer::ReadFrom(const ConnPtr& c) {
  // First what a frame waiting for admission left: its header is read, its bytes stashed.
  // A frame still refused leaves its stash where it is (no copy per try).
  if (c->reader.awaiting_admission() && !AdmitFrame(c)) return;
  if (!c->stash.empty()) {
    const std::string stashed = std::exchange(c->stash, {});
    if (!Drain(c, stashed) || c->reading_paused) return;
  }
  char buf[64 << 10];
  size_t budget = 1 << 20;  // per wake-up, so that one busy peer does not starve the others
  while (budget > 0 && !c->reading_paused) {
    Result<size_t> n = size_t{0};
    std::string_view bytes;
    if (c->reader.payload_missing() >= sizeof buf) {
      // A large payload goes from the socket straight into its (admitted) frame, 1 MiB at most
      // at a time so that other connections get their turn.
      n = c->stream().Recv(c->reader.payload_tail(),
                           std::min<size_t>(c->reader.payload_missing(), 1 << 20));
      if (n.ok()) c->reader.PayloadFilled(*n);
    } else {
      n = c->stream().Recv(buf, sizeof buf);
      if (n.ok()) bytes = std::string_view(buf, *n);
    }
    if (!n.ok()) {
      ARCHIL_LOG(kDebug) << "server: " << c->peer() << ": " << n.status().message();
      Close(c);
      return;
    }
    if (*n == 0) return;  // nothing more now; epoll wakes us
    budget -= std::min(budget, *n);
    if (!Drain(c, bytes)) return;
  }
  if (!c->reading_paused && c->stream().Buffered()) again_.push_back(c);
}

bool DiskServer::Drain(const ConnPtr& c, std::string_view bytes) {
  while (true) {
    if (c->reader.ready()) {
      proto::Frame frame = c->reader.Take();
      Charge charge{c->charged_disk, std::exchange(c->charged_bytes, 0)};
      c->frame_started_ns = 0;
      const bool keep = OnFrame(c, std::move(frame), &charge);
      Discharge(charge);  // unless a worker took it
      if (!keep) {
        Close(c);
        return false;
      }
      continue;
    }
    if (c->reader.awaiting_admission()) {
      if (!AdmitFrame(c)) {
        c->stash.assign(bytes);  // paused: these wait with the header
        return true;
      }
      continue;
    }
    if (const std::optional<proto::FrameError>& e = c->reader.error()) {
      if (e->reply) Error(c, proto::FrameHeader(), e->status, e->message);
      ARCHIL_LOG(kDebug) << "server: " << c->peer() << ": " << e->message << "; closing";
      Close(c);
      return false;
    }
    if (bytes.empty()) return true;
    bytes.remove_prefix(c->reader.Feed(bytes));
  }
}

void DiskServer::Error(const ConnPtr& c, const proto::FrameHeader& h, WireStatus status,
                       std::string_view message) {
  Response r = ErrorResponse(status, message);
  c->Reply(h, r.status, r.body);
}

bool DiskServer::AdmitFrame(const ConnPtr& c) {
  const proto::FrameHeader& h = c->reader.header();
  const uint64_t bytes = proto::kHeaderSize + uint64_t{h.body_len} + h.payload_len;
  const uint64_t seen = budget_.discharges();
  const RequestBudget::Verdict v = budget_.TryCharge(c->budget_disk, c->inflight_bytes, bytes);
  if (v != RequestBudget::Verdict::kAdmitted) {
    Starve(c, v, bytes, seen);
    return false;
  }
  if (budget_.total() > (uint64_t{64} << 20)) trim_after_peak_ = true;
  c->charged_disk = c->budget_disk;
  c->charged_bytes = bytes;
  c->frame_started_ns = clock_->MonotonicNanos();
  c->reader.Admit();
  return true;
}

bool DiskServer::OnFrame(const ConnPtr& c, proto::Frame frame, Charge* charge) {
  const proto::FrameHeader& h = frame.header;
  c->last_frame_ns = clock_->MonotonicNanos();
  if (h.is_reply()) return true;  // answers to pushes: nothing waits for them yet
  if (std::optional<proto::Refusal> no = c->Admit(h)) {
    Error(c, h, no->status, no->message);
    return !no->close;
  }
  const auto answered = [&](WireStatus status, std::string_view message) {
    Error(c, h, status, message);
    c->Answered(h.request_id);
    return true;
  };
  if (std::optional<WireStatus> bad = proto::CheckPayloadAllowed(h)) {
    return answered(*bad, "a payload on a message that carries none");
  }
  switch (h.type) {
    case proto::kTypeHello:
    case proto::kTypeSessionCreate:
    case proto::kTypeSessionBind:
    case proto::kTypeGoodbye:
    case proto::kTypePing: {
      std::unique_ptr<proto::Message> m;
      if (WireStatus st = proto::ParseBody(h, frame.body, &m); st != WireStatus::kOk) {
        return answered(st, "the body does not parse");
      }
      bool keep = true;
      if (h.type == proto::kTypeHello) keep = Hello(c, h, *m);
      if (h.type == proto::kTypeSessionCreate) SessionCreate(c, h, *m);
      if (h.type == proto::kTypeSessionBind) SessionBind(c, h, *m);
      if (h.type == proto::kTypeGoodbye) Goodbye(c, h, *m);
      if (h.type == proto::kTypePing) {
        v1::PingReply r;
        r.set_nonce(As<v1::Ping>(*m).nonce());
        r.set_server_time_ns(clock_->NowMicros() * 1000);
        c->Reply(h, WireStatus::kOk, r.SerializeAsString());
      }
      c->Answered(h.request_id);
      if (c->authenticated() && c->counted_unauthenticated) {
        c->counted_unauthenticated = false;
        UncountUnauthenticated(c->peer());
        c->reader.set_limits(options_.limits);
      }
      if (std::shared_ptr<Session> s = c->session())
        c->budget_disk = 1 + s->identity().disk.value();
      return keep;
    }
    default:
      break;
  }
  // The frame's charge goes with it to the worker that answers it.
  const Charge held = std::exchange(*charge, Charge{});
  c->inflight_bytes += held.bytes;
  // Parsed here, in arrival order, so that mutations of one inode keep that order (§6).
  auto m = std::make_shared<std::unique_ptr<proto::Message>>();
  const WireStatus parsed = proto::ParseBody(h, frame.body, m.get());
  const proto::MessageType* type = proto::FindMessageType(h.type);
  const bool mutating = parsed == WireStatus::kOk && type != nullptr && type->mutating;
  auto f = std::make_shared<proto::Frame>(std::move(frame));
  if (!mutating) {
    ready_.push_back(Job{c->budget_disk,
                         [this, c, f, m, parsed, held] { Work(c, *f, m->get(), parsed, held); }});
    return true;
  }
  InodeOrder::TicketPtr ticket = InodeOrder::NewTicket(MutationKeys(h.type, **m));
  auto run = [this, c, f, m, ticket, held, type = h.type, disk = c->budget_disk] {
    auto finish = [this, c, ticket, disk] {
      std::vector<std::function<void()>> next = c->order.Finish(ticket);
      if (next.empty()) return;
      {
        MutexLock lock(&lf_mu_);
        for (auto& n : next) jobs_.push_back(Job{disk, std::move(n)});
      }
      for (size_t i = 0; i < next.size(); ++i) lf_cv_.Signal();
    };
    // A WRITE is one commit: the next mutation of its file may start as soon as that commit has
    // its place in the engine's queue, so that a file's writes share syncs (ADR 0015). Finish
    // runs once; a write that never reached the queue finishes here.
    Work(c, *f, m->get(), WireStatus::kOk, held,
         type == proto::kTypeWrite ? std::function<void()>(finish) : nullptr);
    finish();
  };
  // The work holds its ticket until it is taken out to run (TakeRun), which breaks the cycle.
  if (c->order.Arrive(ticket, std::move(run))) {
    ready_.push_back(Job{c->budget_disk, InodeOrder::TakeRun(ticket)});
  }
  return true;
}

void DiskServer::RegisterMetrics() {
  metrics::Registry* reg = options_.metrics;
  if (reg == nullptr) return;
  metrics::CounterFamily* answered = reg->AddCounter(
      "archil_disk_requests_total", "Disk protocol requests answered, by message type.", {"op"});
  metrics::HistogramFamily* seconds = reg->AddHistogram(
      "archil_disk_request_seconds",
      "Disk protocol requests: seconds from the start of their execution to their reply.", {"op"},
      metrics::DefaultLatencyBounds());
  for (const proto::MessageType& t : proto::MessageTypes()) {
    const std::string op(t.name);
    op_metrics_[t.code] = {answered->With({op}), seconds->With({op})};
  }
  errors_ = reg->AddCounter("archil_disk_request_errors_total",
                            "Disk protocol requests answered with a status other than OK.",
                            {"op", "status"});
  bytes_written_ = reg->AddCounter("archil_disk_written_bytes_total",
                                   "File data received in write requests, in bytes.", {})
                       ->With({});
  bytes_read_ = reg->AddCounter("archil_disk_read_bytes_total",
                                "File data sent in read replies, in bytes.", {})
                    ->With({});
}

void DiskServer::Count(uint16_t type, const Response& r, uint64_t bytes_in, int64_t start_ns) {
  if (options_.metrics == nullptr) return;
  auto it = op_metrics_.find(type);
  if (it != op_metrics_.end()) {
    it->second.answered->Add();
    it->second.seconds->Observe(static_cast<double>(clock_->MonotonicNanos() - start_ns) / 1e9);
  }
  if (r.status != WireStatus::kOk) {  // the label strings are made for failures only
    const proto::MessageType* t = proto::FindMessageType(type);
    errors_
        ->With({t ? std::string(t->name) : "unknown", std::string(proto::WireStatusName(r.status))})
        ->Add();
  } else if (type == proto::kTypeWrite) {
    bytes_written_->Add(bytes_in);
  }
  if (!r.payload.empty()) bytes_read_->Add(r.payload.size());
}

void DiskServer::Work(const ConnPtr& c, const proto::Frame& frame, const proto::Message* m,
                      WireStatus parsed, Charge charge, const std::function<void()>& on_queued) {
  const int64_t start_ns = clock_->MonotonicNanos();
  const proto::FrameHeader& h = frame.header;
  Response r;
  std::string why;
  std::shared_ptr<Session> session = c->session();
  if (parsed != WireStatus::kOk) {
    r = ErrorResponse(parsed, parsed == WireStatus::kUnsupportedType ? "unknown message type"
                                                                     : "the body does not parse");
  } else if (!session || session->closed()) {
    r = ErrorResponse(WireStatus::kSessionUnknown, "the session has ended");
  } else if (WireStatus v = proto::ValidateRequest(h, *m, frame.payload,
                                                   proto::ValidationContext{options_.limits}, &why);
             v != WireStatus::kOk) {
    r = ErrorResponse(v, why);
    const proto::MessageType* type = proto::FindMessageType(h.type);
    if (const v1::Mut* mut = type ? type->mut_of(*m) : nullptr) {
      // Puts that pass their own checks are applied: only the request itself is refused.
      std::string puts_why;
      r = Refuse(*session, *mut, r, proto::ValidatePuts(*mut, &puts_why) == WireStatus::kOk);
    }
  } else if (const v1::Mut* mut = MutationOf(h.type, *m);
             mut != nullptr && options_.admit_mutation) {
    // Nothing runs on DELAY (the client sends the same request again); a refusal is this
    // mutation's answer, kept in its slot like any other.
    Status gate = options_.admit_mutation(session->identity().disk);
    if (gate.ok()) {
      r = Execute(*session, h.type, *m, frame.payload, on_queued);
    } else if (gate.code() == Status::Code::kUnavailable) {
      r = DelayResponse(gate.message(), 250);
    } else {
      r = Refuse(*session, *mut,
                 ErrorResponse(proto::WireStatusForErrno(ErrnoFor(gate)), gate.message()));
    }
  } else {
    r = Execute(*session, h.type, *m, frame.payload, on_queued);
  }
  // Counted before the reply leaves: a client that has its answer finds it counted.
  Count(h.type, r, frame.payload.size(), start_ns);
  c->Reply(h, r.status, r.body, r.payload, r.replayed ? proto::kFlagReplayed : 0);
  c->Answered(h.request_id);
  c->inflight_bytes -= charge.bytes;
  Discharge(charge);
}

const v1::Mut* DiskServer::MutationOf(uint16_t type, const proto::Message& m) {
  const proto::MessageType* t = proto::FindMessageType(type);
  return t == nullptr ? nullptr : t->mut_of(m);
}

void DiskServer::Sweep() {
  const int64_t now = clock_->MonotonicNanos();
  std::vector<ConnPtr> expired;
  for (const auto& [fd, c] : conns_) {
    if (!c->authenticated()) {
      if (now - c->created_ns() > int64_t{options_.auth_deadline_ms} * 1'000'000) {
        expired.push_back(c);
      }
      continue;
    }
    if (c->frame_started_ns != 0 &&
        now - c->frame_started_ns > int64_t{options_.frame_deadline_ms} * 1'000'000) {
      ARCHIL_LOG(kInfo) << "server: " << c->peer() << ": a frame still incomplete "
                        << options_.frame_deadline_ms << " ms after its header; closing";
      expired.push_back(c);
      continue;
    }
    std::shared_ptr<Session> s = c->session();
    const int64_t lease_ns =
        int64_t{s ? s->identity().lease_ms : options_.default_lease_ms} * 1'000'000;
    if (now - c->last_frame_ns > 3 * lease_ns) expired.push_back(c);
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto next = std::next(it);
    if (now - it->second.created_ns > int64_t{options_.auth_deadline_ms} * 1'000'000) {
      DropPending(it, "silent since it connected");
    }
    it = next;
  }
  for (const ConnPtr& c : expired) {
    ARCHIL_LOG(kDebug) << "server: " << c->peer() << ": "
                       << (c->authenticated() ? "silent for 3 leases" : "no session in time")
                       << "; closing";
    Close(c);
  }
  for (auto it = failures_.begin(); it != failures_.end();) {
    it = now - it->second.window_start_ns > 60'000'000'000 ? failures_.erase(it) : std::next(it);
  }
  // After a peak (many large frames at once, or an attack), the frame buffers were freed but the
  // allocator keeps their pages: give them back once the server holds little again.
  if (trim_after_peak_ && budget_.total() < (uint64_t{16} << 20)) {
    trim_after_peak_ = false;
    malloc_trim(0);
  }
}

}  // namespace archil::server
