// KilledCaller: whether the process that made a FUSE request is being killed.
//
// Once the daemon has read a request, the kernel waits for its reply uninterruptibly: a process
// killed while it waits cannot die until the daemon answers. The kernel marks such a thread with
// a pending SIGKILL (a fatal signal becomes one for every thread of the group), which its
// /proc/<tid>/status shows; the adapter's requests poll this (base/cancel.h) while they wait for
// a server, and answer EINTR so that the process dies. Other signals (SIGCHLD, SIGALRM, a
// profiler's) interrupt nothing: an application sees no EINTR it did not ask for.
//
// Thread-safety: const methods, safe from any thread.
#pragma once

#include <sys/types.h>

#include <string_view>

#include "base/cancel.h"

namespace archil::fuse {

// Whether a /proc/<tid>/status text shows SIGKILL pending (SigPnd or ShdPnd, bit 9).
bool SigKillPending(std::string_view proc_status);

class KilledCaller final : public CancelCheck {
 public:
  explicit KilledCaller(pid_t tid) : tid_(tid) {}
  // False for requests of no process (tid 0: the kernel's own writeback).
  bool Cancelled() const override;

 private:
  const pid_t tid_;
};

}  // namespace archil::fuse
