#include "server/cpu_share.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cmath>

namespace archil::server {

CpuShare::CpuShare(Options options) : options_(options) {}

int64_t CpuShare::ThreadCpuNanos() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

double CpuShare::AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

double CpuShare::SharedRate(size_t active) const { return options_.cpus / double(active + 1); }

size_t CpuShare::Refill(int64_t now_ns) {
  size_t active = 0;
  for (auto it = accounts_.begin(); it != accounts_.end();) {
    Account& a = it->second;
    if (now_ns - a.last_seen_ns > options_.window_ns && a.tokens_ns >= 0) {
      it = accounts_.erase(it);  // idle and owing nothing: forgotten
      continue;
    }
    if (now_ns - a.last_seen_ns <= options_.window_ns) ++active;
    ++it;
  }
  // The rate while `active` disks share; alone, a disk's bucket is simply full.
  const double rate = active > 1 ? SharedRate(active) : options_.cpus;
  for (auto& [disk, a] : accounts_) {
    const int64_t elapsed = std::max<int64_t>(0, now_ns - a.refilled_ns);
    a.tokens_ns = std::min(double(options_.burst_ns), a.tokens_ns + rate * double(elapsed));
    if (active <= 1 && now_ns - a.last_seen_ns <= options_.window_ns) {
      a.tokens_ns = double(options_.burst_ns);
    }
    a.refilled_ns = now_ns;
  }
  return active;
}

CpuShare::Account& CpuShare::Of(uint64_t disk, int64_t now_ns) {
  auto [it, fresh] = accounts_.try_emplace(disk);
  if (fresh) {
    it->second.refilled_ns = now_ns;
    it->second.tokens_ns = double(options_.burst_ns);
  }
  return it->second;
}

int64_t CpuShare::ReleaseTime(uint64_t disk, int64_t now_ns) {
  MutexLock lock(&mu_);
  Of(disk, now_ns).last_seen_ns = now_ns;
  const size_t active = Refill(now_ns);
  const Account& a = accounts_.at(disk);
  if (active <= 1 || a.tokens_ns >= 0) return now_ns;
  return now_ns + int64_t(std::ceil(-a.tokens_ns / SharedRate(active)));
}

void CpuShare::Charge(uint64_t disk, int64_t cpu_ns, int64_t now_ns) {
  MutexLock lock(&mu_);
  Account& a = Of(disk, now_ns);
  a.last_seen_ns = std::max(a.last_seen_ns, now_ns);
  Refill(now_ns);
  a.tokens_ns -= double(std::max<int64_t>(0, cpu_ns));
}

}  // namespace archil::server
