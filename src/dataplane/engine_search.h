// EngineSearch: the control plane's grep (control/disk_search.h) over the storage engine: a
// snapshot view of the disk's head (Engine::OpenSnapshot) or a checkpoint's view, searched by
// search::Grep.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>

#include "base/clock.h"
#include "control/disk_search.h"
#include "engine/engine.h"

namespace archil {

class EngineSearch final : public DiskSearch {
 public:
  // REQUIRES: `engine` and `clock` outlive this.
  EngineSearch(engine::Engine* engine, const Clock* clock) : engine_(engine), clock_(clock) {}

  static constexpr int kMaxRunning = 4;

  Result<GrepAnswer> Grep(const DiskId& disk, const GrepQuery& query) override;

 private:
  Result<GrepAnswer> Run(const DiskId& disk, const GrepQuery& query);

  engine::Engine* const engine_;
  const Clock* const clock_;
  std::atomic<int> running_{0};
};

}  // namespace archil
