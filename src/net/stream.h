// Stream: a connected socket as the disk protocol uses it, in cleartext or under TLS (tls.h):
// receive what has arrived, send a frame's pieces whole, shut down. The server's I/O thread and
// the client's reading caller receive; the threads that reply or call send, one at a time.
//
// Contract for every implementation:
//   - Recv and SendAll may run at the same time on two threads (one receiving, one sending);
//     two concurrent Recv, or two concurrent SendAll, are the caller's error.
//   - Shutdown is safe from any thread at any time and idempotent; it wakes a blocked peer of
//     the socket, and later calls fail.
//   - The descriptor is closed when the stream is destroyed.
#pragma once

#include <sys/uio.h>

#include <memory>
#include <span>

#include "base/status.h"
#include "net/socket.h"

namespace archil::net {

class Stream {
 public:
  virtual ~Stream() = default;
  // The socket, for poll/epoll.
  int fd() const { return fd_.get(); }

  // Receives up to `n` bytes into `buf`: how many arrived, or 0 if none are there now (a
  // non-blocking socket, or a TLS handshake still under way). Unavailable when the peer closed
  // the connection ("closed by the peer") or it failed (the message says how).
  virtual Result<size_t> Recv(char* buf, size_t n) = 0;
  // True if bytes already received from the socket are waiting to be returned by Recv (TLS
  // decrypts whole records): read again before waiting on the socket, which will not wake.
  virtual bool Buffered() = 0;
  // Sends every byte of `iov`, in order, waiting for room up to `timeout_ms` in all. Unavailable
  // if the peer is gone or did not read within the time. `iov` is consumed.
  virtual Status SendAll(std::span<iovec> iov, int timeout_ms) = 0;
  // Shuts the socket down both ways.
  void Shutdown();

 protected:
  explicit Stream(Fd fd) : fd_(std::move(fd)) {}

 private:
  const Fd fd_;
};

// A cleartext TCP stream: Recv is one recv, SendAll one sendmsg per frame (socket.h).
class PlainStream final : public Stream {
 public:
  explicit PlainStream(Fd fd) : Stream(std::move(fd)) {}
  Result<size_t> Recv(char* buf, size_t n) override;
  bool Buffered() override { return false; }
  Status SendAll(std::span<iovec> iov, int timeout_ms) override;
};

}  // namespace archil::net
