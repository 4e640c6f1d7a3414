#include "cli/mount_exchange.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "api/mount_control.h"

namespace archil {

Result<std::string> ExchangeWithMount(const std::string& path, const std::string& request) {
  ARCHIL_ASSIGN_OR_RETURN(UnixAddress addr, UnixAddress::For(path));
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, "socket");
  auto done = [fd](Status s) -> Result<std::string> {
    close(fd);
    return s;
  };
  if (connect(fd, addr.addr(), addr.size()) != 0) {
    return done(Status::Unavailable("the mount's daemon does not answer on " + path + " (" +
                                    std::strerror(errno) + "): is it an archil mount?"));
  }
  size_t off = 0;
  while (off < request.size()) {
    ssize_t n = send(fd, request.data() + off, request.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return done(Status::FromErrno(errno, "send to the mount's daemon"));
    off += static_cast<size_t>(n);
  }
  std::string reply;
  char buf[4096];
  while (reply.find('\n') == std::string::npos && reply.size() < kMaxControlReply) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 60000) <= 0) {
      return done(Status::Unavailable("the mount's daemon did not answer within 60 s"));
    }
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

}  // namespace archil
