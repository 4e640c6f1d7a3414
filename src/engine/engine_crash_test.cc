// The engine under simulated power loss, against the reference model.
//
// Each round: a fresh SimEnv, a disk, random operations mirrored on ModelFs; a fault rule cuts
// the power just before a random mutating file operation (inside RocksDB's WAL or MANIFEST writes,
// a segment write, an fdatasync, a directory sync...). After a restart with a seeded power-loss
// model (unsynced data dropped, writes torn at sector granularity, un-synced directory entries
// lost), the engine must open, and its tree must equal the model as of every acknowledged
// operation, plus possibly the one in flight (which may or may not have committed). Rounds print
// their seed; ARCHIL_CRASH_SEED=S replays one, ARCHIL_CRASH_ROUNDS=N sets how many run (from
// ARCHIL_CRASH_FIRST_SEED, default 1000).
//
// The last line is "N crashes, 0 lost" (scripts/crashtest.sh reads it).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "base/log.h"
#include "engine/engine.h"
#include "io/sim_env.h"
#include "posix/fs_driver.h"
#include "posix/model_fs.h"

namespace archil::engine {
namespace {

uint64_t EnvU64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

struct Round {
  bool crashed = false;
  std::string failure;  // empty: nothing lost
};

Round RunRound(uint64_t seed) {
  Round out;
  std::mt19937_64 rng(seed);
  io::SimEnv env;
  FakeClock clock;
  EngineOptions o;
  o.env = &env;
  o.dir = "/data";
  o.clock = &clock;
  o.segment_blocks = 32 + rng() % 64;
  o.intent_sync_ms = 0;
  o.rocks_max_sleep_micros = 0;
  o.block_cache_mb = 8;
  auto opened = Engine::Open(o);
  if (!opened.ok()) return {false, "first open: " + opened.status().ToString()};
  std::unique_ptr<Engine> engine = std::move(opened).value();
  if (!engine->CreateDisk(DiskNo(1), {}).ok()) return {false, "create disk"};
  posix::FileSystem* fs = *engine->Disk(DiskNo(1));

  auto acked = std::make_unique<posix::ModelFs>(&clock);  // every acknowledged operation
  std::unique_ptr<posix::ModelFs> in_flight;              // and the one the power cut interrupted
  std::vector<posix::Ino> he, hm;
  posix::FsOpGenerator gen(seed);
  // Cut the power somewhere in the next few hundred mutating file operations.
  io::FaultRule cut;
  cut.ops = io::kSimMutating;
  cut.skip = rng() % 400;  // counts matching operations from now on
  cut.power_off = true;
  env.AddFaultRule(cut);
  const int ops = 60 + static_cast<int>(rng() % 160);
  for (int i = 0; i < ops; ++i) {
    posix::FsOp op = gen.Next(acked.get(), hm.size());
    auto before = std::make_unique<posix::ModelFs>(*acked);
    posix::FsOutcome want = posix::Apply(acked.get(), op, &hm);
    posix::FsOutcome got = posix::Apply(fs, op, &he);
    if (env.powered_off()) {
      // The op in flight may have committed, or not: only `before` was acknowledged.
      in_flight = std::move(acked);
      acked = std::move(before);
      out.crashed = true;
      break;
    }
    if (!(got == want)) {
      return {false, "op " + std::to_string(i) + " " + posix::Describe(op) + ": engine errno " +
                         std::to_string(got.err) + ", model " + std::to_string(want.err)};
    }
    if (rng() % 50 == 0)
      (void)engine->SyncIntents();  // an I/O error here is a crash, checked below
    clock.Advance(3);
  }
  engine.reset();  // the process dies
  env.PowerOff();
  env.Restart(seed);
  opened = Engine::Open(o);
  if (!opened.ok()) return {out.crashed, "reopen after power loss: " + opened.status().ToString()};
  engine = std::move(opened).value();
  auto disk = engine->Disk(DiskNo(1));
  if (!disk.ok()) return {out.crashed, "disk lost"};
  fs = *disk;
  // Sessions do not survive the crash: their opens go on both sides.
  if (!fs->DropHolder(posix::HolderId(1)).ok()) return {out.crashed, "drop holder"};
  if (!acked->DropHolder(posix::HolderId(1)).ok()) return {out.crashed, "model drop holder"};
  Status same = posix::CompareTrees(acked.get(), fs);
  if (!same.ok() && in_flight) {
    if (!in_flight->DropHolder(posix::HolderId(1)).ok()) return {out.crashed, "model drop"};
    if (posix::CompareTrees(in_flight.get(), fs).ok()) same = Status::Ok();
  }
  if (!same.ok()) return {out.crashed, "after restart: " + same.message()};
  // And it keeps working.
  Result<posix::Attr> f = fs->Mknod(posix::kRootIno, "after-crash", 0100644, 0, {});
  if (!f.ok() && f.status().sys_errno() != EEXIST) return {out.crashed, "write after restart"};
  return out;
}

TEST(EngineCrashTest, EveryAcknowledgedOperationSurvivesPowerLoss) {
  SetLogLevel(LogLevel::kWarn);  // each restart logs its intent replay at info
  const uint64_t first = EnvU64("ARCHIL_CRASH_SEED", EnvU64("ARCHIL_CRASH_FIRST_SEED", 1000));
  const uint64_t rounds = std::getenv("ARCHIL_CRASH_SEED") ? 1 : EnvU64("ARCHIL_CRASH_ROUNDS", 200);
  uint64_t crashes = 0, lost = 0, mid_op = 0;
  auto start = std::chrono::steady_clock::now();
  for (uint64_t r = 0; r < rounds; ++r) {
    uint64_t seed = first + r;
    Round round = RunRound(seed);
    crashes += 1;
    mid_op += round.crashed;
    if (!round.failure.empty()) {
      ++lost;
      ADD_FAILURE() << "seed " << seed << " (replay: ARCHIL_CRASH_SEED=" << seed
                    << "): " << round.failure;
      if (lost >= 5) break;
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("crash test: %llu rounds in %.1f s (%.1f crashes/s), %llu cut inside an operation\n",
              static_cast<unsigned long long>(crashes), secs, static_cast<double>(crashes) / secs,
              static_cast<unsigned long long>(mid_op));
  std::printf("%llu crashes, %llu lost\n", static_cast<unsigned long long>(crashes),
              static_cast<unsigned long long>(lost));
}

}  // namespace
}  // namespace archil::engine
