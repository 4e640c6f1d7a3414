#include "base/owner_watch.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace archil {

Result<pid_t> ParseOwnerPid(const char* value) {
  if (value == nullptr || *value == '\0') return pid_t{0};
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (errno != 0 || *end != '\0' || v <= 0 || v > INT_MAX ||
      !std::isdigit(static_cast<unsigned char>(value[0]))) {
    return Status::InvalidArgument("ARCHIL_OWNER_PID must be a process id, not '" +
                                   std::string(value) + "'");
  }
  return static_cast<pid_t>(v);
}

Result<pid_t> OwnerFromEnv() { return ParseOwnerPid(std::getenv("ARCHIL_OWNER_PID")); }

OwnerWatch::OwnerWatch(pid_t owner, std::function<void()> on_death)
    : thread_([this, owner, f = std::move(on_death)] { Run(owner, f); }) {}

OwnerWatch::~OwnerWatch() {
  stop_ = true;
  thread_.join();
}

void OwnerWatch::Run(pid_t owner, const std::function<void()>& on_death) {
  // A pidfd becomes readable when the process ends, whoever its parent is; without one (a kernel
  // before 5.3), kill(pid, 0) is asked at the same pace.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, owner, 0));
  bool dead = pidfd < 0 && errno == ESRCH;
  while (!dead && !stop_) {
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      dead = poll(&p, 1, kPollMs) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0;
    } else {
      dead = kill(owner, 0) != 0 && errno == ESRCH;
      if (!dead) usleep(kPollMs * 1000);
    }
  }
  if (pidfd >= 0) close(pidfd);
  if (dead && !stop_) on_death();
}

}  // namespace archil
