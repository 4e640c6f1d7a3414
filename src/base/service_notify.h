// Telling the service manager (systemd, Type=notify) how the process is doing: the sd_notify
// protocol without libsystemd. A datagram of "KEY=VALUE" lines to the unix socket named by
// NOTIFY_SOCKET (a path, or "@name" for the abstract namespace). Without NOTIFY_SOCKET, nothing
// is sent and the calls succeed: the process runs the same under a shell.
//
// Thread-safety: free functions; safe to call from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"

namespace archil {

// Sends `state` ("READY=1", "STATUS=…", "WATCHDOG=1", "STOPPING=1", several separated by '\n').
// OK if sent or if no service manager listens (no NOTIFY_SOCKET); an error says why a send
// failed (the socket gone, a bad address).
Status NotifyServiceManager(std::string_view state);

// How often the service manager wants WATCHDOG=1 from this process: WATCHDOG_USEC, if set, valid,
// and meant for this pid (WATCHDOG_PID unset or this pid). Ping at half this interval.
std::optional<std::chrono::microseconds> ServiceWatchdogInterval();

// Feeds the service manager's watchdog: WATCHDOG=1 at half the interval it asked for, each time
// `healthy` returns OK. A failed check is logged and its ping skipped, so that the manager
// restarts a process that stays stuck (WatchdogSec=). Without a watchdog it starts no thread.
class ServiceWatchdog {
 public:
  explicit ServiceWatchdog(std::function<Status()> healthy);
  ~ServiceWatchdog() { Stop(); }
  ServiceWatchdog(const ServiceWatchdog&) = delete;
  ServiceWatchdog& operator=(const ServiceWatchdog&) = delete;
  // Ends the pings; returns once the thread has ended. Idempotent.
  void Stop() ARCHIL_EXCLUDES(mu_);

 private:
  void Run(std::chrono::microseconds every) ARCHIL_EXCLUDES(mu_);
  const std::function<Status()> healthy_;
  Mutex mu_;
  CondVar cv_{&mu_};
  bool stop_ ARCHIL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace archil
