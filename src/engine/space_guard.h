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
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstdint>
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

  // OK if `bytes` more may be written; ENOSPC saying how much is free otherwise.
  Status Admit(uint64_t bytes) ARCHIL_EXCLUDES(mu_);
  // A fresh sample of the file system's space.
  Result<io::SpaceInfo> Sample() ARCHIL_EXCLUDES(mu_);
  uint64_t reserve_bytes() const { return reserve_; }

 private:
  static constexpr int64_t kSampleMicros = 100000;
  io::Env* const env_;
  const std::string dir_;
  const uint64_t reserve_;
  const Clock* const clock_;
  Mutex mu_;
  io::SpaceInfo last_ ARCHIL_GUARDED_BY(mu_);
  bool sampled_ ARCHIL_GUARDED_BY(mu_) = false;
  int64_t sampled_at_ ARCHIL_GUARDED_BY(mu_) = 0;
  uint64_t admitted_since_ ARCHIL_GUARDED_BY(mu_) = 0;
};

}  // namespace archil::engine
