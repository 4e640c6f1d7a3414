#include "engine/space/space_guard.h"

#include <cerrno>

#include "base/log.h"

namespace archil::engine {

Result<io::SpaceInfo> SpaceGuard::Sample() {
  ARCHIL_ASSIGN_OR_RETURN(io::SpaceInfo s, env_->Space(dir_));
  MutexLock lock(&mu_);
  last_ = s;
  sampled_ = true;
  sampled_at_ = clock_->NowMicros();
  admitted_since_ = 0;
  return s;
}

Status SpaceGuard::Admit(uint64_t bytes) {
  Status s = TryAdmit(bytes);
  if (s.ok() || !reclaim_) return s;
  {
    MutexLock lock(&reclaim_mu_);
    const int64_t now = clock_->NowMicros();
    // A reclaim that ran while this caller waited for the lock counts for it too.
    if (freed_.exchange(false, std::memory_order_relaxed) ||
        now - reclaimed_at_ >= kReclaimMicros) {
      Status r = reclaim_();
      if (!r.ok()) ARCHIL_LOG(kWarn) << "engine: giving back freed space: " << r.ToString();
      reclaimed_at_ = clock_->NowMicros();
    }
    ARCHIL_RETURN_IF_ERROR(Sample().status());
  }
  return TryAdmit(bytes);
}

Status SpaceGuard::TryAdmit(uint64_t bytes) {
  bool stale = false;
  {
    MutexLock lock(&mu_);
    const uint64_t margin = last_.free_bytes > reserve_ ? last_.free_bytes - reserve_ : 0;
    stale = !sampled_ || clock_->NowMicros() - sampled_at_ > kSampleMicros ||
            2 * (admitted_since_ + bytes) > margin;
  }
  if (stale) ARCHIL_RETURN_IF_ERROR(Sample().status());
  MutexLock lock(&mu_);
  const uint64_t used = admitted_since_ + bytes;
  if (last_.free_bytes < reserve_ || last_.free_bytes - reserve_ < used) {
    return Status::Errno(ENOSPC, "no space left: " + std::to_string(last_.free_bytes >> 20) +
                                     " MiB free, " + std::to_string(reserve_ >> 20) +
                                     " MiB kept in reserve for deletes");
  }
  admitted_since_ = used;
  return Status::Ok();
}

}  // namespace archil::engine
