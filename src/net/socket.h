// Sockets for the disk protocol: TCP addresses ("host:port", "[v6]:port"), listening,
// connecting, and sending a frame's pieces with one sendmsg (docs/protocol.md §2).
//
// Thread-safety: functions are thread-safe; an fd's sends must be serialized by the caller.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace archil::net {

// An owned file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  int get() const { return fd_; }
  int release();
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Parses "host:port" or "[v6]:port"; InvalidArgument naming the expected form.
struct HostPort {
  std::string host;
  uint16_t port = 0;
};
Result<HostPort> ParseHostPort(std::string_view address);

// A disk server's address as advertised and configured: "host:port" (cleartext) or
// "tls://host:port" (TLS, docs/protocol.md §2). InvalidArgument naming both forms.
struct ServerAddress {
  bool tls = false;
  std::string host_port;  // "host:port", for Connect
};
Result<ServerAddress> ParseServerAddress(std::string_view address);

// A listening TCP socket (SO_REUSEADDR, not SO_REUSEPORT: a second server on the port fails
// with Busy "address in use" instead of sharing it), non-blocking.
Result<Fd> Listen(const std::string& address, int backlog = 1024);
// The address a socket is bound to, as "host:port".
Result<std::string> LocalAddress(int fd);
// The peer's address without the port ("127.0.0.1", "::1").
std::string PeerHost(int fd);
// The text of errno value `err` (thread-safe, unlike strerror).
std::string ErrorText(int err);
// True for 127.0.0.0/8 and ::1 (and ::ffff:127.x).
bool IsLoopback(std::string_view host);

// A blocking TCP connection with TCP_NODELAY, within `timeout_ms`. Unavailable if the server
// cannot be reached (refused, unreachable, timed out).
Result<Fd> Connect(const std::string& address, int timeout_ms);

// Writes every byte of `iov` (a frame's header, body and payload) with sendmsg, looping over
// partial writes; on a non-blocking socket waits for room up to `timeout_ms` in total.
// Unavailable if the peer is gone or did not read within the time.
Status SendAll(int fd, std::span<iovec> iov, int timeout_ms);

// Milliseconds on the monotonic clock: the time base of every deadline in this library.
int64_t NowMs();

}  // namespace archil::net
