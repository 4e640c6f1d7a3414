#include "metrics/metrics_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string_view>

#include "base/log.h"
#include "base/thread_name.h"

namespace archil::metrics {
namespace {

constexpr size_t kMaxRequest = 8 << 10;
constexpr int kReadMs = 2000;
constexpr int kWriteMs = 5000;

std::string Reply(int status, std::string_view reason, std::string_view type, std::string_view body,
                  bool head) {
  std::string r = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                  "\r\nContent-Type: " + std::string(type) +
                  "\r\nContent-Length: " + std::to_string(body.size()) +
                  "\r\nConnection: close\r\n";
  if (status == 405) r += "Allow: GET, HEAD\r\n";
  r += "\r\n";
  if (!head) r += body;
  return r;
}

// recv() of what arrives before `deadline`; 0 at the deadline, at the end of the stream or on an
// error.
size_t RecvBefore(int fd, char* buf, size_t n, std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  pollfd p{fd, POLLIN, 0};
  if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return 0;
  const ssize_t got = ::recv(fd, buf, n, 0);
  return got > 0 ? static_cast<size_t>(got) : 0;
}

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address,
                                                            std::function<std::string()> render) {
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->render_ = std::move(render);
  ARCHIL_ASSIGN_OR_RETURN(s->listener_, net::Listen(address, 64));
  ARCHIL_ASSIGN_OR_RETURN(s->address_, net::LocalAddress(s->listener_.get()));
  s->wake_ = net::Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!s->wake_.valid()) return Status::FromErrno(errno, "eventfd for the metrics server");
  s->thread_ = std::thread([p = s.get()] {
    NameThisThread("metrics-http");
    p->Loop();
  });
  ARCHIL_LOG(kInfo) << "metrics: serving GET /metrics on " << s->address_;
  return s;
}

void MetricsServer::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
  thread_.join();
}

void MetricsServer::Loop() {
  while (true) {
    pollfd p[2] = {{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      ARCHIL_LOG(kWarn) << "metrics: poll: " << net::ErrorText(errno) << "; no more scrapes";
      return;
    }
    if (p[1].revents != 0) return;
    net::Fd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (c.valid()) Serve(c.get());
  }
}

void MetricsServer::Serve(int fd) {
  std::string req;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kReadMs);
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < kMaxRequest) {
    char buf[2048];
    const size_t n = RecvBefore(fd, buf, sizeof buf, deadline);
    if (n == 0) return;
    req.append(buf, n);
  }
  std::string reply;
  const size_t line_end = req.find("\r\n");
  const std::string_view line =
      std::string_view(req).substr(0, line_end == std::string::npos ? 0 : line_end);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (req.find("\r\n\r\n") == std::string::npos || sp2 == std::string_view::npos ||
      !line.substr(sp2 + 1).starts_with("HTTP/1.")) {
    reply = Reply(400, "Bad Request", "text/plain", "bad request\n", false);
  } else {
    const std::string_view method = line.substr(0, sp1);
    std::string_view path = line.substr(sp1 + 1, sp2 - sp1 - 1);
    path = path.substr(0, path.find('?'));
    const bool head = method == "HEAD";
    if (method != "GET" && !head) {
      reply = Reply(405, "Method Not Allowed", "text/plain", "GET or HEAD\n", false);
    } else if (path != "/metrics") {
      reply = Reply(404, "Not Found", "text/plain", "metrics are at /metrics\n", head);
    } else {
      reply = Reply(200, "OK", "text/plain; version=0.0.4; charset=utf-8", render_(), head);
    }
  }
  iovec iov{reply.data(), reply.size()};
  if (Status s = net::SendAll(fd, std::span<iovec>(&iov, 1), kWriteMs); !s.ok()) {
    ARCHIL_LOG(kDebug) << "metrics: " << s.ToString();
    return;
  }
  // A lingering close: closing with unread request bytes would reset the connection, and the
  // peer could lose the reply. Read what is left (up to 64 KiB, 200 ms) after saying we are done.
  ::shutdown(fd, SHUT_WR);
  const auto linger = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  char buf[4096];
  for (size_t drained = 0, n = 1; n > 0 && drained < (64u << 10); drained += n) {
    n = RecvBefore(fd, buf, sizeof buf, linger);
  }
}

}  // namespace archil::metrics
