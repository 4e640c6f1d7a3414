#include "mount/control_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/strings.h"
#include "base/thread_name.h"

namespace archil::mount {
namespace {

constexpr int kRequestTimeoutMs = 5000;

// Reads one line (or up to the limit) within the timeout. False on timeout, EOF or error.
bool ReadLine(int fd, std::string* out) {
  char buf[4096];
  while (out->find('\n') == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, kRequestTimeoutMs) <= 0) return false;
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > kMaxControlLine) return false;
  }
  out->resize(out->find('\n') + 1);
  return true;
}

void WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

Status ControlServer::Start() {
  ARCHIL_ASSIGN_OR_RETURN(UnixAddress addr, UnixAddress::For(path_));
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return Status::FromErrno(errno, "control socket");
  unlink(path_.c_str());  // a dead daemon's
  const mode_t old = umask(077);
  int rc = bind(listen_fd_, addr.addr(), addr.size());
  const int bind_errno = errno;
  umask(old);
  if (rc != 0) return Status::FromErrno(bind_errno, "bind " + path_);
  chmod(path_.c_str(), 0600);
  if (listen(listen_fd_, 16) != 0) return Status::FromErrno(errno, "listen " + path_);
  if (pipe2(wake_fd_, O_CLOEXEC) != 0) return Status::FromErrno(errno, "pipe");
  thread_ = std::thread([this] {
    NameThisThread("mount-control");
    Loop();
  });
  return Status::Ok();
}

void ControlServer::Stop() {
  if (thread_.joinable()) {
    char c = 0;
    (void)!write(wake_fd_[1], &c, 1);
    thread_.join();
  }
  for (int* fd : {&listen_fd_, &wake_fd_[0], &wake_fd_[1]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  unlink(path_.c_str());
}

void ControlServer::Loop() {
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[1].revents != 0) return;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Serve(fd);
    close(fd);
  }
}

void ControlServer::Serve(int fd) {
  ucred peer{};
  socklen_t len = sizeof(peer);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 ||
      (peer.uid != 0 && peer.uid != geteuid())) {
    ControlReply denied;
    denied.status = Status::Errno(EACCES, "only root or the mount's owner may control it");
    WriteAll(fd, EncodeControlReply(denied));
    return;
  }
  std::string line;
  if (!ReadLine(fd, &line)) return;
  Result<ControlRequest> req = DecodeControlRequest(line);
  ControlReply reply;
  if (!req.ok()) {
    reply.status = req.status();
  } else {
    reply = handler_(*req);
  }
  WriteAll(fd, EncodeControlReply(reply));
}

}  // namespace archil::mount
