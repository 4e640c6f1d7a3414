#include "client/channel.h"

#include <sys/socket.h>

#include <chrono>

namespace archil::client {

Result<std::unique_ptr<Channel>> Channel::Open(const std::string& address, int timeout_ms) {
  ARCHIL_ASSIGN_OR_RETURN(net::Fd fd, net::Connect(address, timeout_ms));
  std::unique_ptr<Channel> c(new Channel(std::move(fd)));
  c->reader_ = std::thread([p = c.get()] { p->ReadLoop(); });
  return c;
}

Channel::~Channel() {
  Break("closed");
  if (reader_.joinable()) reader_.join();
}

bool Channel::broken() const {
  MutexLock lock(&mu_);
  return broken_;
}

void Channel::Break(std::string_view why) {
  MutexLock lock(&mu_);
  if (broken_) return;
  broken_ = true;
  why_ = std::string(why);
  for (auto& [id, p] : pending_) {
    p->done = true;
    p->result = Status::Unavailable("connection lost: " + why_);
  }
  pending_.clear();
  replied_.SignalAll();
  ::shutdown(fd_.get(), SHUT_RDWR);
}

Result<RawReply> Channel::Call(uint16_t type, std::string_view body, std::string_view payload,
                               int timeout_ms) {
  Pending p;
  proto::FrameHeader h;
  h.type = type;
  {
    MutexLock lock(&mu_);
    if (broken_) return Status::Unavailable("connection lost: " + why_);
    h.request_id = next_id_++;
    pending_[h.request_id] = &p;
  }
  h.payload_len = static_cast<uint32_t>(payload.size());
  std::string header = proto::EncodeHeader(h, body);
  iovec iov[3] = {{header.data(), header.size()},
                  {const_cast<char*>(body.data()), body.size()},
                  {const_cast<char*>(payload.data()), payload.size()}};
  Status sent;
  {
    MutexLock lock(&send_mu_);
    sent = net::SendAll(fd_.get(), iov, timeout_ms);
  }
  if (!sent.ok()) Break(sent.message());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  {
    MutexLock lock(&mu_);
    while (!p.done) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) break;
      replied_.WaitFor(&mu_, std::chrono::duration_cast<std::chrono::milliseconds>(left) +
                                 std::chrono::milliseconds(1));
    }
    if (p.done) return std::move(p.result);
    pending_.erase(h.request_id);
  }
  const std::string why = "no reply within " + std::to_string(timeout_ms) + " ms";
  Break(why);
  return Status::Unavailable(why);
}

void Channel::Deliver(proto::Frame frame) {
  MutexLock lock(&mu_);
  if (!frame.header.is_reply()) return;  // pushes: the server closes the connection after them
  auto it = pending_.find(frame.header.request_id);
  if (it == pending_.end()) return;  // a call that timed out
  it->second->done = true;
  it->second->result = RawReply{frame.header, std::move(frame.body), std::move(frame.payload)};
  pending_.erase(it);
  replied_.SignalAll();
}

void Channel::ReadLoop() {
  proto::FrameReader reader(proto::kDefaultLimits);
  std::string buf(256 << 10, '\0');
  while (true) {
    ssize_t n;
    std::string_view bytes;
    if (reader.payload_missing() >= buf.size()) {
      n = ::recv(fd_.get(), reader.payload_tail(), reader.payload_missing(), 0);
      if (n > 0) reader.PayloadFilled(static_cast<size_t>(n));
    } else {
      n = ::recv(fd_.get(), buf.data(), buf.size(), 0);
      if (n > 0) bytes = std::string_view(buf.data(), static_cast<size_t>(n));
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Break(n == 0 ? "closed by the server" : "receive failed");
      return;
    }
    while (true) {
      if (reader.ready()) {
        Deliver(reader.Take());
        continue;
      }
      if (reader.error()) {
        Break("bad frame from the server: " + reader.error()->message);
        return;
      }
      if (bytes.empty()) break;
      bytes.remove_prefix(reader.Feed(bytes));
    }
  }
}

}  // namespace archil::client
