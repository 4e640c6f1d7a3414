#include "base/service_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/log.h"
#include "base/strings.h"
#include "base/thread_name.h"

namespace archil {

Status NotifyServiceManager(std::string_view state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || *path == '\0') return Status::Ok();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t len = std::strlen(path);
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("NOTIFY_SOCKET '" + std::string(path) +
                                   "' is not a socket path or an abstract name");
  }
  std::memcpy(addr.sun_path, path, len);
  if (path[0] == '@') addr.sun_path[0] = '\0';
  const socklen_t addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, "socket for NOTIFY_SOCKET");
  const ssize_t n = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                             reinterpret_cast<const sockaddr*>(&addr), addr_len);
  const int err = errno;
  ::close(fd);
  if (n < 0) return Status::FromErrno(err, "notify the service manager at " + std::string(path));
  return Status::Ok();
}

std::optional<std::chrono::microseconds> ServiceWatchdogInterval() {
  const char* usec = std::getenv("WATCHDOG_USEC");
  if (usec == nullptr) return std::nullopt;
  const std::optional<uint64_t> us = ParseUint64(usec);
  if (!us || *us == 0 || *us > uint64_t{1} << 40) return std::nullopt;
  if (const char* pid = std::getenv("WATCHDOG_PID"); pid != nullptr && *pid != '\0') {
    const std::optional<uint64_t> p = ParseUint64(pid);
    if (!p || *p != static_cast<uint64_t>(getpid())) return std::nullopt;
  }
  return std::chrono::microseconds(static_cast<int64_t>(*us));
}

ServiceWatchdog::ServiceWatchdog(std::function<Status()> healthy) : healthy_(std::move(healthy)) {
  if (std::optional<std::chrono::microseconds> every = ServiceWatchdogInterval()) {
    thread_ = std::thread([this, half = *every / 2] {
      NameThisThread("watchdog");
      Run(half);
    });
  }
}

void ServiceWatchdog::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void ServiceWatchdog::Run(std::chrono::microseconds every) {
  while (true) {
    if (Status h = healthy_(); h.ok()) {
      if (Status n = NotifyServiceManager("WATCHDOG=1"); !n.ok()) {
        ARCHIL_LOG(kWarn) << "watchdog: " << n.ToString();
      }
    } else {
      ARCHIL_LOG(kWarn) << "watchdog: not fed, the server is unhealthy: " << h.ToString();
    }
    MutexLock lock(&mu_);
    const auto until = std::chrono::steady_clock::now() + every;
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      cv_.WaitFor(&mu_, until - std::chrono::steady_clock::now());
    }
    if (stop_) return;
  }
}

}  // namespace archil
