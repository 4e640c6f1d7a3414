// The DiskServer letting connections in (protocol.md §11): the listener under the admission CPU
// share, a bounded batch of accepts per round, the per-address limit and the pool of connections
// not yet authenticated (the oldest evicted first when it is full), and the choice between TLS and
// plain TCP by a connection's first byte. The reactor that calls them is disk_server.cc.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "base/address_key.h"
#include "base/log.h"
#include "server/disk_server.h"

namespace archil::server {

namespace {

constexpr unsigned char kTlsHandshakeByte = 0x16;  // a TLS record's first byte: handshake

}  // namespace

void DiskServer::Admit() {
  if (!share_) return AcceptSome();
  const int64_t now = clock_->MonotonicNanos();
  const int64_t release = share_->AdmissionReleaseTime(now);
  if (release > now) {
    epoll_event ev{};  // no events: the listener stays registered, unwatched
    ev.data.fd = listener_.get();
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, listener_.get(), &ev) == 0) {
      accept_paused_until_ns_ = release;
      ++accept_pauses_;
      return;
    }
  }
  const int64_t cpu_before = CpuShare::ThreadCpuNanos();
  AcceptSome();
  share_->ChargeAdmission(CpuShare::ThreadCpuNanos() - cpu_before, clock_->MonotonicNanos());
}

void DiskServer::ResumeAccepting(int64_t now_ns) {
  if (accept_paused_until_ns_ == 0 || now_ns < accept_paused_until_ns_) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listener_.get();
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, listener_.get(), &ev) == 0) {
    accept_paused_until_ns_ = 0;
  }
}

void DiskServer::AcceptSome() {
  // A bounded batch per round (the listener is level-triggered: the rest come next round), so
  // that a flood of connections neither holds the lead while others' requests wait, nor evicts
  // a newcomer (a mount in its handshake) before the round that would read its first bytes.
  for (int accepted = 0; accepted < kAcceptsPerRound; ++accepted) {
    net::Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) {
      if (errno == EINTR) continue;
      if (errno == EMFILE || errno == ENFILE) {
        ARCHIL_LOG(kWarn) << "server: out of file descriptors; connections wait";
      }
      return;
    }
    const std::string peer = net::PeerHost(fd.get());
    if (auto u = unauthenticated_.find(AddressKey(peer));
        u != unauthenticated_.end() && u->second >= options_.max_unauthenticated_per_peer) {
      ARCHIL_LOG(kDebug) << "server: refusing a connection from " << peer << " (per-address limit)";
      continue;  // closed as fd goes
    }
    // A peer over its failed-authentication limit gets one new connection a second until its
    // window ends (protocol.md §11).
    if (auto f = failures_.find(AddressKey(peer));
        f != failures_.end() && f->second.count > kAuthFailuresPerMinute) {
      const int64_t now = clock_->MonotonicNanos();
      if (now - f->second.window_start_ns < 60'000'000'000) {
        if (now - f->second.last_accept_ns < 1'000'000'000) {
          ARCHIL_LOG(kDebug) << "server: refusing a connection from " << peer
                             << " (failed authentications: one a second)";
          continue;
        }
        f->second.last_accept_ns = now;
      }
    }
    // Connections that have not authenticated yet take their own, smaller pool: when it (or
    // the whole table) is full, the oldest of them makes room, so sockets that never say HELLO
    // cannot keep clients with a token out.
    if (unauthenticated_total_ >= options_.max_unauthenticated ||
        connection_count_ >= options_.max_connections) {
      if (!EvictOldestUnauthenticated()) {
        ARCHIL_LOG(kDebug) << "server: refusing a connection from " << peer << " (limit)";
        continue;
      }
    }
    const int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const int raw = fd.get();
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = raw;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, raw, &ev) != 0) continue;
    // Cleartext or TLS is known at the connection's first byte (ChooseStream).
    const int64_t now = clock_->MonotonicNanos();
    pending_[raw] = Pending{std::move(fd), peer, now};
    pending_order_.emplace_back(now, raw);
    if (pending_order_.size() > 4 * (pending_.size() + 16)) {
      // Mostly entries of sockets that spoke or went since: rebuilt from what is pending.
      pending_order_.clear();
      for (const auto& [pfd, p] : pending_) pending_order_.emplace_back(p.created_ns, pfd);
      std::sort(pending_order_.begin(), pending_order_.end());
    }
    CountUnauthenticated(peer);
    ++connection_count_;
  }
}

void DiskServer::CountUnauthenticated(const std::string& peer) {
  ++unauthenticated_[AddressKey(peer)];
  ++unauthenticated_total_;
}

void DiskServer::UncountUnauthenticated(const std::string& peer) {
  auto u = unauthenticated_.find(AddressKey(peer));
  if (u != unauthenticated_.end() && --u->second == 0) unauthenticated_.erase(u);
  --unauthenticated_total_;
}

bool DiskServer::EvictOldestUnauthenticated() {
  // Silent sockets first, oldest first: O(1) per eviction however many there are.
  while (!pending_order_.empty()) {
    const auto [created, fd] = pending_order_.front();
    pending_order_.pop_front();
    auto it = pending_.find(fd);
    if (it == pending_.end() || it->second.created_ns != created) continue;  // gone already
    ++evicted_count_;
    DropPending(it, "evicted, silent and not authenticated");
    return true;
  }
  ConnPtr oldest_conn;
  for (const auto& [fd, c] : conns_) {
    if (c->counted_unauthenticated &&
        (!oldest_conn || c->created_ns() < oldest_conn->created_ns())) {
      oldest_conn = c;
    }
  }
  if (!oldest_conn) return false;
  ++evicted_count_;
  ARCHIL_LOG(kDebug) << "server: " << oldest_conn->peer() << ": evicted, not authenticated";
  Close(oldest_conn);
  return true;
}

void DiskServer::ChooseStream(int fd) {
  auto it = pending_.find(fd);
  unsigned char first = 0;
  const ssize_t n = ::recv(fd, &first, 1, MSG_PEEK);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    DropPending(it, "closed before its first byte");
    return;
  }
  Pending& p = it->second;
  std::unique_ptr<net::Stream> stream;
  if (first == kTlsHandshakeByte) {
    if (!options_.tls) {
      DropPending(it, "a TLS handshake, but this server has no certificate (--tls-cert)");
      return;
    }
    // The handshake runs in the first reads, under epoll (net/tls.h), within auth_deadline_ms.
    Result<std::unique_ptr<net::TlsStream>> tls =
        net::TlsStream::Wrap(std::move(p.fd), *options_.tls, "");
    if (!tls.ok()) {
      DropPending(it, tls.status().ToString());
      return;
    }
    stream = std::move(*tls);
  } else {
    // Anything else is a cleartext frame (a bad magic is refused as such, §12 row 2), which
    // only this machine may send, unless the operator allowed cleartext (--insecure).
    if (!net::IsLoopback(p.peer) && !options_.allow_cleartext) {
      DropPending(it, "cleartext from another machine: connect with TLS");
      return;
    }
    stream = std::make_unique<net::PlainStream>(std::move(p.fd));
  }
  auto c = std::make_shared<Connection>(std::move(stream), p.peer, p.created_ns,
                                        options_.send_timeout_ms);
  pending_.erase(it);
  conns_[fd] = c;
  ReadFrom(c);
}

void DiskServer::DropPending(std::map<int, Pending>::iterator it, std::string_view why) {
  ARCHIL_LOG(kDebug) << "server: " << it->second.peer << ": " << why << "; closing";
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->first, nullptr);
  UncountUnauthenticated(it->second.peer);
  pending_.erase(it);  // closes the socket (or the stream that took it)
  --connection_count_;
}

}  // namespace archil::server
