// CpuShare: the server's CPU time, shared between disks while more than one wants it, so that a
// token holder whose requests are expensive (listing a file's 64 KiB of xattr names thousands of
// times a second) cannot make another disk's requests wait for a CPU (docs/protocol.md §12).
//
// Each request's CPU time (its thread's) is charged to its disk. A disk is active while it has
// had a request within `window_ns`. Alone, a disk may use every CPU. While n > 1 disks are
// active, each earns CPU time at cpus / (n + 1) of wall time (one share left free, so that a
// disk whose request arrives finds a CPU) into a bucket of at most `burst_ns`; a disk whose
// bucket is empty has its next requests held until it has earned back what it overspent. A disk
// that uses less than its share is never held: only what a disk takes beyond it waits.
//
// Work no disk pays for (letting connections in: accepting them, evicting silent ones to make
// room) has an account of its own that earns `admission_cpus` of wall time whatever the disks
// do, and is not an active disk: a flood of connections that never authenticate can take at most
// that much CPU from the disks, and a disk alone keeps every CPU while connections arrive.
//
// Thread-safety: safe for concurrent use (the leader asks, workers charge).
#pragma once

#include <cstdint>
#include <map>

#include "base/mutex.h"

namespace archil::server {

class CpuShare {
 public:
  struct Options {
    double cpus = 1;                  // the CPUs the server may use (> 0)
    int64_t window_ns = 200'000'000;  // how long after its last request a disk counts as active
    int64_t burst_ns = 10'000'000;    // CPU time a disk may spend at once beyond its rate
    double admission_cpus = 0.25;     // the CPUs letting connections in may use (> 0)
  };
  explicit CpuShare(Options options);

  // A request of `disk` arrived at `now_ns`: the time at which it may run (now_ns, or later
  // while the disk is over its share).
  int64_t ReleaseTime(uint64_t disk, int64_t now_ns) ARCHIL_EXCLUDES(mu_);
  // A request of `disk` that ended at `now_ns` used `cpu_ns` of CPU.
  void Charge(uint64_t disk, int64_t cpu_ns, int64_t now_ns) ARCHIL_EXCLUDES(mu_);

  // The same for the work of letting connections in: the time at which more may be accepted
  // (now_ns, or later while that work is over its `admission_cpus`), and what a round of it used.
  int64_t AdmissionReleaseTime(int64_t now_ns) ARCHIL_EXCLUDES(mu_);
  void ChargeAdmission(int64_t cpu_ns, int64_t now_ns) ARCHIL_EXCLUDES(mu_);

  // The CPU time of the calling thread so far (CLOCK_THREAD_CPUTIME_ID), in nanoseconds.
  static int64_t ThreadCpuNanos();
  // The CPUs this process may run on (its affinity mask), at least 1.
  static double AvailableCpus();

 private:
  struct Account {
    int64_t last_seen_ns = 0;
    int64_t refilled_ns = 0;
    double tokens_ns = 0;  // CPU time earned and not spent; negative: overspent
  };
  // How many disks are active at now_ns: counted again (forgetting idle disks that owe nothing)
  // at most every kRecountNs, so that a request costs O(log disks), not a walk of them all.
  static constexpr int64_t kRecountNs = 10'000'000;
  size_t Active(int64_t now_ns) ARCHIL_REQUIRES(mu_);
  // Records a request of `a`'s disk at now_ns.
  void MarkSeen(Account* a, int64_t now_ns) ARCHIL_REQUIRES(mu_);
  // Brings `a`'s bucket to now_ns at the rate `active` disks earn (full while alone).
  void Refill(Account* a, size_t active, int64_t now_ns) ARCHIL_REQUIRES(mu_);
  Account& Of(uint64_t disk, int64_t now_ns) ARCHIL_REQUIRES(mu_);
  // Adds to `a`'s bucket what `rate` CPUs earn from its last refill to now_ns, up to the burst.
  void Earn(Account* a, double rate, int64_t now_ns) const ARCHIL_REQUIRES(mu_);
  // Brings the admission bucket to now_ns at admission_cpus.
  void RefillAdmission(int64_t now_ns) ARCHIL_REQUIRES(mu_);
  // The CPU time each of `active` (> 1) disks earns per unit of wall time.
  double SharedRate(size_t active) const;

  const Options options_;
  Mutex mu_;
  std::map<uint64_t, Account> accounts_ ARCHIL_GUARDED_BY(mu_);
  Account admission_ ARCHIL_GUARDED_BY(mu_);  // refilled at admission_cpus; never "active"
  size_t active_ ARCHIL_GUARDED_BY(mu_) = 0;
  int64_t counted_ns_ ARCHIL_GUARDED_BY(mu_) = 0;  // when active_ was counted; 0: never
};

}  // namespace archil::server
