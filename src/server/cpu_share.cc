#include "server/cpu_share.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cmath>

namespace archil::server {

CpuShare::CpuShare(Options options) : options_(options) {
  admission_.tokens_ns = double(options_.burst_ns);
}

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

size_t CpuShare::Active(int64_t now_ns) {
  if (counted_ns_ != 0 && now_ns - counted_ns_ < kRecountNs) return active_;
  // At most once per kRecountNs, not per request: a server with many disks walks them rarely.
  const double rate = active_ > 1 ? SharedRate(active_) : options_.cpus;
  size_t active = 0;
  for (auto it = accounts_.begin(); it != accounts_.end();) {
    const Account& a = it->second;
    const bool recent = now_ns - a.last_seen_ns <= options_.window_ns;
    const double projected =
        a.tokens_ns + rate * double(std::max<int64_t>(0, now_ns - a.refilled_ns));
    if (!recent && projected >= 0) {
      it = accounts_.erase(it);  // idle and owing nothing: forgotten
      continue;
    }
    if (recent) ++active;
    ++it;
  }
  active_ = active;
  counted_ns_ = now_ns;
  return active;
}

void CpuShare::Refill(Account* a, size_t active, int64_t now_ns) {
  if (active <= 1) {
    a->tokens_ns = double(options_.burst_ns);  // alone, a disk's bucket is simply full
  } else {
    Earn(a, SharedRate(active), now_ns);
  }
  a->refilled_ns = now_ns;
}

void CpuShare::Earn(Account* a, double rate, int64_t now_ns) const {
  const int64_t elapsed = std::max<int64_t>(0, now_ns - a->refilled_ns);
  a->tokens_ns = std::min(double(options_.burst_ns), a->tokens_ns + rate * double(elapsed));
}

void CpuShare::MarkSeen(Account* a, int64_t now_ns) {
  // A disk that becomes active counts at once (one that goes quiet, at the next recount).
  if (a->last_seen_ns == 0 || now_ns - a->last_seen_ns > options_.window_ns) ++active_;
  a->last_seen_ns = std::max(a->last_seen_ns, now_ns);
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
  Account& a = Of(disk, now_ns);
  MarkSeen(&a, now_ns);
  const size_t active = Active(now_ns);
  Refill(&a, active, now_ns);
  if (active <= 1 || a.tokens_ns >= 0) return now_ns;
  return now_ns + int64_t(std::ceil(-a.tokens_ns / SharedRate(active)));
}

void CpuShare::Charge(uint64_t disk, int64_t cpu_ns, int64_t now_ns) {
  MutexLock lock(&mu_);
  Account& a = Of(disk, now_ns);
  MarkSeen(&a, now_ns);
  Refill(&a, Active(now_ns), now_ns);
  a.tokens_ns -= double(std::max<int64_t>(0, cpu_ns));
}

int64_t CpuShare::AdmissionReleaseTime(int64_t now_ns) {
  MutexLock lock(&mu_);
  RefillAdmission(now_ns);
  if (admission_.tokens_ns >= 0) return now_ns;
  return now_ns + int64_t(std::ceil(-admission_.tokens_ns / options_.admission_cpus));
}

void CpuShare::ChargeAdmission(int64_t cpu_ns, int64_t now_ns) {
  MutexLock lock(&mu_);
  RefillAdmission(now_ns);
  admission_.tokens_ns -= double(std::max<int64_t>(0, cpu_ns));
}

void CpuShare::RefillAdmission(int64_t now_ns) {
  if (admission_.refilled_ns == 0) admission_.refilled_ns = now_ns;
  Earn(&admission_, options_.admission_cpus, now_ns);
  admission_.refilled_ns = std::max(admission_.refilled_ns, now_ns);
}

}  // namespace archil::server
