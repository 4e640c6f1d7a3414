#include "base/owner_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

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

bool StatusShowsKill(std::string_view status) {
  for (std::string_view key : {"ShdPnd:", "SigPnd:"}) {
    const size_t at = status.find(key);
    if (at == std::string_view::npos) continue;
    size_t i = at + key.size();
    while (i < status.size() && (status[i] == ' ' || status[i] == '\t')) ++i;
    size_t end = i;
    while (end < status.size() && std::isxdigit(static_cast<unsigned char>(status[end]))) ++end;
    // The mask's last hex digit holds signals 1-4, the one before 5-8, the third 9-12.
    if (end - i < 3) continue;
    const char c = status[end - 3];
    const int digit = std::isdigit(static_cast<unsigned char>(c))
                          ? c - '0'
                          : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    if (digit & 1) return true;  // signal 9, SIGKILL
  }
  return false;
}

namespace {

// True if `pid` has a SIGKILL pending: it is dying, but may wait in an uninterruptible sleep (on
// a page of a FUSE mount, say, that only this process could end) before it can.
bool KillPending(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/status";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  return n > 0 && StatusShowsKill(std::string_view(buf, static_cast<size_t>(n)));
}

}  // namespace

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
    // A killed owner stuck in an uninterruptible wait on what we serve would never end: it is
    // dead for us once its SIGKILL is pending.
    if (!dead) dead = KillPending(owner);
  }
  if (pidfd >= 0) close(pidfd);
  if (dead && !stop_) on_death();
}

}  // namespace archil
