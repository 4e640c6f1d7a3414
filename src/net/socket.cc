#include "net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>

namespace archil::net {

namespace {

Status Sys(std::string_view what) { return Status::FromErrno(errno, what); }

Result<sockaddr_storage> Resolve(const HostPort& hp, socklen_t* len) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(hp.port);
  const int rc = getaddrinfo(hp.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    return Status::InvalidArgument("cannot resolve '" + hp.host + "': " + gai_strerror(rc));
  }
  sockaddr_storage ss{};
  std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return ss;
}

std::string HostOf(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof buf);
  } else if (ss.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof buf);
  }
  return buf;
}

uint16_t PortOf(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(ss).sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6&>(ss).sin6_port);
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

int Fd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

Result<HostPort> ParseHostPort(std::string_view a) {
  const Status bad =
      Status::InvalidArgument("address '" + std::string(a) + "' is not host:port or [ipv6]:port");
  HostPort hp;
  std::string_view port;
  if (!a.empty() && a[0] == '[') {
    const size_t close = a.find(']');
    if (close == std::string_view::npos || close + 1 >= a.size() || a[close + 1] != ':') return bad;
    hp.host = std::string(a.substr(1, close - 1));
    port = a.substr(close + 2);
  } else {
    const size_t colon = a.rfind(':');
    if (colon == std::string_view::npos || a.find(':') != colon) return bad;
    hp.host = std::string(a.substr(0, colon));
    port = a.substr(colon + 1);
  }
  if (hp.host.empty() || port.empty() || port.size() > 5) return bad;
  uint32_t p = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return bad;
    p = p * 10 + static_cast<uint32_t>(c - '0');
  }
  if (p > 65535) return bad;
  hp.port = static_cast<uint16_t>(p);
  return hp;
}

std::string ErrorText(int err) { return std::generic_category().message(err); }

Result<ServerAddress> ParseServerAddress(std::string_view address) {
  ServerAddress out;
  constexpr std::string_view kTls = "tls://";
  if (address.starts_with(kTls)) {
    out.tls = true;
    address.remove_prefix(kTls.size());
  }
  if (!ParseHostPort(address).ok()) {
    return Status::InvalidArgument("disk server address \"" + std::string(address) +
                                   "\": expected host:port or tls://host:port");
  }
  out.host_port = std::string(address);
  return out;
}

Result<Fd> Listen(const std::string& address, int backlog) {
  ARCHIL_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address));
  socklen_t len = 0;
  ARCHIL_ASSIGN_OR_RETURN(sockaddr_storage ss, Resolve(hp, &len));
  Fd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Sys("socket");
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    if (errno == EADDRINUSE) {
      return Status::Busy("address " + address + " is in use (another server listens there?)");
    }
    return Sys("bind " + address);
  }
  if (::listen(fd.get(), backlog) != 0) return Sys("listen");
  return fd;
}

Result<std::string> LocalAddress(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return Sys("getsockname");
  const std::string host = HostOf(ss);
  const std::string port = std::to_string(PortOf(ss));
  return ss.ss_family == AF_INET6 ? "[" + host + "]:" + port : host + ":" + port;
}

std::string PeerHost(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  return HostOf(ss);
}

bool IsLoopback(std::string_view host) {
  return host == "::1" || host.starts_with("127.") || host.starts_with("::ffff:127.");
}

Result<Fd> Connect(const std::string& address, int timeout_ms) {
  ARCHIL_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(address));
  socklen_t len = 0;
  ARCHIL_ASSIGN_OR_RETURN(sockaddr_storage ss, Resolve(hp, &len));
  Fd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Sys("socket");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    if (errno != EINPROGRESS) {
      return Status::Unavailable("connect to " + address + ": " + ErrorText(errno));
    }
    pollfd p{fd.get(), POLLOUT, 0};
    if (::poll(&p, 1, timeout_ms) != 1) {
      return Status::Unavailable("connect to " + address + ": timed out");
    }
    int err = 0;
    socklen_t elen = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &elen);
    if (err != 0) return Status::Unavailable("connect to " + address + ": " + ErrorText(err));
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const unsigned user_timeout_ms = 20000;  // a dead peer with unacknowledged data (§2)
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
  return fd;
}

Status SendAll(int fd, std::span<iovec> iov, int timeout_ms) {
  const int64_t deadline = NowMs() + timeout_ms;
  size_t first = 0;
  while (first < iov.size()) {
    if (iov[first].iov_len == 0) {
      ++first;
      continue;
    }
    msghdr msg{};
    msg.msg_iov = iov.data() + first;
    msg.msg_iovlen = iov.size() - first;
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) return Status::Unavailable(std::string("send: ") + ErrorText(errno));
      const int64_t left = deadline - NowMs();
      pollfd p{fd, POLLOUT, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) != 1) {
        return Status::Unavailable("send: the peer did not read for " + std::to_string(timeout_ms) +
                                   " ms");
      }
      continue;
    }
    size_t sent = static_cast<size_t>(n);
    while (sent > 0 && first < iov.size()) {
      const size_t take = std::min(sent, iov[first].iov_len);
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + take;
      iov[first].iov_len -= take;
      sent -= take;
      if (iov[first].iov_len == 0) ++first;
    }
  }
  return Status::Ok();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace archil::net
