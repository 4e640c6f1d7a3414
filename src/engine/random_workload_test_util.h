// RandomWorkload: a seeded random workload on an engine for tests that compare two engines
// (the commit log's replay, recovery from the bucket): file operations from posix::FsOpGenerator,
// checkpoints taken and deleted, and up to two branches. CompareEngines then checks that another
// engine holds the same disks, heads and checkpoints, times and block counts included.
#pragma once

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "engine/engine.h"
#include "io/posix_env.h"
#include "posix/fs_driver.h"

namespace archil::engine {

// An engine on the local file system in `dir` for such tests: small (128 KiB) segments, no
// background syncer, and with `tiered` the tier's options (the commit log, segments kept until
// uploaded).
inline EngineOptions TestEngineOptions(const std::string& dir, const Clock* clock, bool tiered) {
  EngineOptions o;
  o.env = io::PosixEnv();
  o.dir = dir;
  o.clock = clock;
  o.segment_blocks = 32;
  o.intent_sync_ms = 0;
  o.block_cache_mb = 8;
  o.reserve_bytes = 0;
  o.keep_segments_until_uploaded = tiered;
  o.log_commits = tiered;
  return o;
}

class RandomWorkload {
 public:
  // Disk 1 must exist in `engine`.
  RandomWorkload(Engine* engine, FakeClock* clock, unsigned seed)
      : engine_(engine), clock_(clock), rng_(seed), gen_(seed) {}

  // One step on a random disk: 3 % a checkpoint, 1 % the deletion of one, 1 % a branch (while
  // there are fewer than 3 disks), else a file operation; then the clock moves 1 ms. A failed
  // checkpoint or branch call is the error (a file operation's own errno is part of the workload).
  Status Step() {
    const int dice = static_cast<int>(rng_() % 100);
    const DiskNo d = disks_[rng_() % disks_.size()];
    Status s;
    if (dice < 3) {
      const std::string name = "c" + std::to_string(steps_);
      s = engine_->Checkpoint(d, name).status();
      if (s.ok()) ckpts_.emplace_back(d, name);
    } else if (dice < 4 && !ckpts_.empty()) {
      const size_t k = rng_() % ckpts_.size();
      s = engine_->DeleteCheckpoint(ckpts_[k].first, ckpts_[k].second);
      if (s.ok()) ckpts_.erase(ckpts_.begin() + static_cast<ptrdiff_t>(k));
    } else if (dice < 5 && !ckpts_.empty() && disks_.size() < 3) {
      const auto& [parent, name] = ckpts_[rng_() % ckpts_.size()];
      const DiskNo child(10 + disks_.size());
      s = engine_->CreateBranch(parent, name, child, "b" + std::to_string(steps_));
      if (s.ok()) disks_.push_back(child);
    } else {
      Result<posix::FileSystem*> fs = engine_->Disk(d);
      if (!fs.ok()) return fs.status();
      posix::FsOp op = gen_.Next(*fs, handles_[d.value()].size());
      (void)posix::Apply(*fs, op, &handles_[d.value()]);
    }
    ++steps_;
    clock_->Advance(1000);
    return s;
  }

  const std::vector<DiskNo>& disks() const { return disks_; }
  const std::vector<std::pair<DiskNo, std::string>>& checkpoints() const { return ckpts_; }
  std::mt19937_64& rng() { return rng_; }

 private:
  Engine* engine_;
  FakeClock* clock_;
  std::mt19937_64 rng_;
  posix::FsOpGenerator gen_;
  std::vector<DiskNo> disks_ = {DiskNo(1)};
  std::vector<std::pair<DiskNo, std::string>> ckpts_;
  std::map<uint64_t, std::vector<posix::Ino>> handles_;
  int steps_ = 0;
};

// OK when `b` lists the same disks as `a` and every disk and checkpoint of `w` is the same in
// both (posix::CompareTrees with times and blocks); else the first difference. The workload's
// open handles (holder 1) are dropped on both sides first.
inline Status CompareEngines(Engine* a, Engine* b, const RandomWorkload& w) {
  if (a->ListDisks() != b->ListDisks()) return Status::Internal("the sets of disks differ");
  posix::CompareOptions exact;
  exact.times = true;
  exact.blocks = true;
  for (DiskNo d : w.disks()) {
    ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fa, a->Disk(d));
    ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fb, b->Disk(d));
    ARCHIL_RETURN_IF_ERROR(fa->DropHolder(posix::HolderId(1)));
    ARCHIL_RETURN_IF_ERROR(fb->DropHolder(posix::HolderId(1)));
    ARCHIL_RETURN_IF_ERROR(
        posix::CompareTrees(fa, fb, exact).WithContext("disk " + std::to_string(d.value())));
  }
  for (const auto& [d, name] : w.checkpoints()) {
    ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<posix::FileSystem> va, a->OpenCheckpoint(d, name));
    ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<posix::FileSystem> vb, b->OpenCheckpoint(d, name));
    ARCHIL_RETURN_IF_ERROR(
        posix::CompareTrees(va.get(), vb.get(), exact).WithContext("checkpoint " + name));
  }
  return Status::Ok();
}

}  // namespace archil::engine
