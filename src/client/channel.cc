#include "client/channel.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace archil::client {

Result<std::unique_ptr<Channel>> Channel::Open(const std::string& address, int timeout_ms,
                                               const Security& security, PushHandler on_push) {
  ARCHIL_ASSIGN_OR_RETURN(net::Fd fd, net::Connect(address, timeout_ms));
  // The address the name resolved to decides, not how it is spelled ("localhost" is loopback).
  const bool tls = security.force_tls ||
                   (!security.allow_cleartext && !net::IsLoopback(net::PeerHost(fd.get())));
  if (!tls) {
    return std::unique_ptr<Channel>(
        new Channel(std::make_unique<net::PlainStream>(std::move(fd)), std::move(on_push)));
  }
  if (!security.context) return Status::Internal("channel: TLS needed but no TLS context");
  ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<net::TlsContext> ctx, security.context());
  ARCHIL_ASSIGN_OR_RETURN(net::HostPort hp, net::ParseHostPort(address));
  ARCHIL_ASSIGN_OR_RETURN(std::unique_ptr<net::TlsStream> s,
                          net::TlsStream::Wrap(std::move(fd), *ctx, hp.host));
  if (Status hs = s->Handshake(timeout_ms); !hs.ok()) {
    return Status::Unavailable("disk server " + address + ": " + hs.message());
  }
  return std::unique_ptr<Channel>(new Channel(std::move(s), std::move(on_push)));
}

Channel::~Channel() { Break("closed"); }

bool Channel::broken() const {
  MutexLock lock(&mu_);
  return broken_;
}

bool Channel::broken_by_bad_frame() const {
  MutexLock lock(&mu_);
  return broken_ && bad_frame_;
}

void Channel::Break(std::string_view why) {
  MutexLock lock(&mu_);
  if (broken_) return;
  broken_ = true;
  why_ = std::string(why);
  for (auto& [id, p] : pending_) {
    p->done = true;
    p->result = Status::Unavailable("connection lost: " + why_);
    p->cv.Signal();
  }
  pending_.clear();
  stream_->Shutdown();
}

Result<RawReply> Channel::Call(uint16_t type, std::string_view body, std::string_view payload,
                               const Wait& wait) {
  using std::chrono::steady_clock;
  Pending p(&mu_);
  proto::FrameHeader h;
  h.type = type;
  {
    MutexLock lock(&mu_);
    if (broken_) return Status::Unavailable("connection lost: " + why_);
    h.request_id = next_id_++;
    pending_[h.request_id] = &p;
  }
  proto::OutFrame frame(h, body, payload);
  Status sent;
  {
    MutexLock lock(&send_mu_);
    sent = stream_->SendAll(frame.pieces(), wait.timeout_ms);
  }
  if (!sent.ok()) Break(sent.message());
  const auto deadline = steady_clock::now() + std::chrono::milliseconds(wait.timeout_ms);
  const auto stop = std::min(deadline, wait.give_up);
  // With a cancel check, each wait is a slice of kCancelPollMs at most.
  const auto slice = wait.cancel ? std::chrono::milliseconds(kCancelPollMs)
                                 : std::chrono::milliseconds(wait.timeout_ms);
  while (true) {
    bool read = false;
    steady_clock::time_point until;
    {
      MutexLock lock(&mu_);
      if (p.done) return std::move(p.result);
      const auto now = steady_clock::now();
      if (now >= stop) {
        pending_.erase(h.request_id);
        break;
      }
      until = std::min(stop, now + slice);
      if (!reading_) {
        reading_ = read = true;
      } else {
        p.waiting = true;
        p.cv.WaitFor(&mu_, std::chrono::duration_cast<std::chrono::milliseconds>(until - now) +
                               std::chrono::milliseconds(1));
        p.waiting = false;
      }
    }
    if (read) {
      bool bad_frame = false;
      const Status s = ReadUntil(p, until, &bad_frame);
      {
        MutexLock lock(&mu_);
        reading_ = false;
        if (bad_frame && !broken_) bad_frame_ = true;
        // One waiter takes the reading turn over.
        for (auto& [id, q] : pending_) {
          if (q->waiting) {
            q->cv.Signal();
            break;
          }
        }
      }
      if (!s.ok()) Break(s.message());
    }
    if (wait.cancel) {
      {
        MutexLock lock(&mu_);
        if (p.done) return std::move(p.result);  // answered: no need to ask about the caller
      }
      if (wait.cancel->Cancelled()) {
        MutexLock lock(&mu_);
        if (p.done) return std::move(p.result);
        pending_.erase(h.request_id);
        return Status::Errno(EINTR, "the caller was interrupted");
      }
    }
  }
  if (wait.give_up < deadline) {
    return Status::Unavailable("no reply before the caller's deadline");
  }
  const std::string why = "no reply within " + std::to_string(wait.timeout_ms) + " ms";
  Break(why);
  return Status::Unavailable(why);
}

Status Channel::ReadUntil(const Pending& p, std::chrono::steady_clock::time_point deadline,
                          bool* bad_frame) {
  while (true) {
    {
      MutexLock lock(&mu_);
      if (p.done) return Status::Ok();
    }
    if (reader_.error()) {
      *bad_frame = true;
      return Status::Unavailable("bad frame from the server: " + reader_.error()->message);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::Ok();
    if (!stream_->Buffered()) {
      pollfd pfd{stream_->fd(), POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()) + 1);
      if (ready < 0 && errno != EINTR) return Status::Unavailable("poll failed");
      if (ready <= 0) continue;
    }
    Result<size_t> n = size_t{0};
    std::string_view bytes;
    if (reader_.payload_missing() >= buf_.size()) {
      n = stream_->Recv(reader_.payload_tail(), reader_.payload_missing());
      if (n.ok()) reader_.PayloadFilled(*n);
    } else {
      n = stream_->Recv(buf_.data(), buf_.size());
      if (n.ok()) bytes = std::string_view(buf_.data(), *n);
    }
    if (!n.ok()) return n.status();
    while (!reader_.error()) {
      if (reader_.ready()) {
        Deliver(reader_.Take());
        continue;
      }
      if (bytes.empty()) break;
      bytes.remove_prefix(reader_.Feed(bytes));
    }
  }
}

void Channel::Deliver(proto::Frame frame) {
  if (!frame.header.is_reply()) {
    if (on_push_) on_push_(frame);
    return;
  }
  MutexLock lock(&mu_);
  auto it = pending_.find(frame.header.request_id);
  if (it == pending_.end()) return;  // a call that timed out
  it->second->done = true;
  it->second->result = RawReply{frame.header, std::move(frame.body), std::move(frame.payload)};
  it->second->cv.Signal();
  pending_.erase(it);
}

}  // namespace archil::client
