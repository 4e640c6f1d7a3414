// SpaceGuard: keeps the engine's writes from filling the file system of its data directory.
//
// Writes that add data or names are refused with ENOSPC while the free space would fall below a
// reserve; deletes (unlink, rmdir, truncate, checkpoint and disk delete) are never refused, and
// the reserve is what they, the intent syncer and RocksDB's flushes and compactions write with.
// RocksDB itself therefore never meets a full disk (it would stop accepting writes until reopened).
// Once space returns, writes are admitted again.
//
// The free figure is sampled (statvfs) at most every 100 ms, and sooner once the bytes admitted
// since the sample could have used half of the margin above the reserve.
//
// Before it refuses a write, the guard has the engine give back what deletes freed but the
// engine still holds (the reclaimer: Engine::Reclaim closes open segments with nothing live and
// flushes the WAL that holds the bytes of dead small writes), then samples again: a write is
// refused only if the space is still not there. The reclaimer runs once at a time, and again
// only after something was freed (Freed) or a second has passed.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "io/env.h"

namespace archil::engine {

class SpaceGuard {
 public:
  // REQUIRES: env and clock outlive the guard.
  SpaceGuard(io::Env* env, std::string dir, uint64_t reserve_bytes, const Clock* clock)
      : env_(env), dir_(std::move(dir)), reserve_(reserve_bytes), clock_(clock) {}

  // OK if `bytes` more may be written; ENOSPC saying how much is free otherwise (after the
  // reclaimer, if one is set, ran or was not due).
  Status Admit(uint64_t bytes) ARCHIL_EXCLUDES(mu_, reclaim_mu_);
  // Sets the reclaimer. REQUIRES: before the first Admit; it must not call Admit.
  void SetReclaimer(std::function<Status()> reclaim) { reclaim_ = std::move(reclaim); }
  // Something was freed: the next refusal runs the reclaimer first.
  void Freed() { freed_.store(true, std::memory_order_relaxed); }
  // A fresh sample of the file system's space.
  Result<io::SpaceInfo> Sample() ARCHIL_EXCLUDES(mu_);
  uint64_t reserve_bytes() const { return reserve_; }

 private:
  static constexpr int64_t kSampleMicros = 100000;
  static constexpr int64_t kReclaimMicros = 1000000;
  // Admit against the last sample (taken again if stale).
  Status TryAdmit(uint64_t bytes) ARCHIL_EXCLUDES(mu_);
  io::Env* const env_;
  const std::string dir_;
  const uint64_t reserve_;
  const Clock* const clock_;
  Mutex mu_;
  io::SpaceInfo last_ ARCHIL_GUARDED_BY(mu_);
  bool sampled_ ARCHIL_GUARDED_BY(mu_) = false;
  int64_t sampled_at_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t admitted_since_ ARCHIL_GUARDED_BY(mu_) = 0;
  std::function<Status()> reclaim_;
  std::atomic<bool> freed_{false};
  Mutex reclaim_mu_;  // one reclaim at a time; taken before mu_
  int64_t reclaimed_at_ ARCHIL_GUARDED_BY(reclaim_mu_) = INT64_MIN / 2;
};

}  // namespace archil::engine
