#include "net/stream.h"

#include <sys/socket.h>

#include <cerrno>

namespace archil::net {

void Stream::Shutdown() { ::shutdown(fd(), SHUT_RDWR); }

Result<size_t> PlainStream::Recv(char* buf, size_t n) {
  while (true) {
    const ssize_t got = ::recv(fd(), buf, n, 0);
    if (got > 0) return static_cast<size_t>(got);
    if (got == 0) return Status::Unavailable("closed by the peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return size_t{0};
    return Status::Unavailable("receive: " + ErrorText(errno));
  }
}

Status PlainStream::SendAll(std::span<iovec> iov, int timeout_ms) {
  return net::SendAll(fd(), iov, timeout_ms);
}

}  // namespace archil::net
