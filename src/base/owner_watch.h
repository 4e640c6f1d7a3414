// OwnerWatch: ends what a process serves when the process that owns it dies.
//
// Tests and benchmarks start servers and mount daemons that must not outlive them: a test that
// ctest times out, or a shell that is killed, would otherwise leave a mount served by a daemon
// whose server is gone, and every later walk of the machine's files would wait on it. Such a
// run names its own pid in ARCHIL_OWNER_PID; `archil server` and the mount daemon watch that
// process and, within `kPollMs` of its death, abort what they serve and exit (docs/cli.md).
//
// Thread-safety: an OwnerWatch runs one thread of its own; `on_death` is called on it, at most
// once, and never after the destructor returned.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <string_view>
#include <thread>

#include "base/status.h"

namespace archil {

// The owner named by ARCHIL_OWNER_PID: 0 if unset or empty; InvalidArgument if it is not a
// positive decimal pid.
Result<pid_t> OwnerFromEnv();
// As OwnerFromEnv, of a value.
Result<pid_t> ParseOwnerPid(const char* value);

// True if a /proc/PID/status text shows a SIGKILL pending (its ShdPnd or SigPnd mask). An owner
// with one counts as dead: killed while in an uninterruptible wait on a mount its own daemon
// serves, it cannot end before the daemon does (docs/adr/0019-a-mount-never-wedges-its-machine.md).
bool StatusShowsKill(std::string_view status);

class OwnerWatch {
 public:
  static constexpr int kPollMs = 100;
  // Watches `owner` (> 0). If it is already gone, `on_death` runs at once on the watch's thread.
  OwnerWatch(pid_t owner, std::function<void()> on_death);
  ~OwnerWatch();  // stops watching; waits for an `on_death` that already began
  OwnerWatch(const OwnerWatch&) = delete;
  OwnerWatch& operator=(const OwnerWatch&) = delete;

 private:
  void Run(pid_t owner, const std::function<void()>& on_death);
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace archil
