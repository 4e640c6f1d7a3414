// EngineTest: a fixture with an engine on the power-loss simulator (io/sim_env.h), small segments
// and no background intent syncing, for the engine's tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "base/clock.h"
#include "engine/engine.h"
#include "io/sim_env.h"

namespace archil::engine {

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  EngineOptions Options() {
    EngineOptions o;
    o.env = &env_;
    o.dir = "/data";
    o.clock = &clock_;
    o.segment_blocks = 64;  // small segments: sealing happens often
    o.intent_sync_ms = 0;
    o.rocks_max_sleep_micros = 0;
    o.block_cache_mb = 8;
    return o;
  }
  void Reopen() {
    engine_.reset();
    Result<std::unique_ptr<Engine>> e = Engine::Open(Options());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  DiskFs* NewDisk(uint64_t n) {
    EXPECT_TRUE(engine_->CreateDisk(DiskNo(n), {}).ok());
    return *engine_->Disk(DiskNo(n));
  }

  io::SimEnv env_;
  FakeClock clock_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace archil::engine
