// The engine under simulated power loss, against the reference model.
//
// Each round: a fresh SimEnv, a disk, random operations mirrored on ModelFs, with checkpoints
// taken and deleted and branches made and deleted along the way; a fault rule cuts
// the power just before a random mutating file operation (inside RocksDB's WAL or MANIFEST writes,
// a segment write, an fdatasync, a directory sync...). After a restart with a seeded power-loss
// model (unsynced data dropped, writes torn at sector granularity, un-synced directory entries
// lost), the engine must open, and every head and every checkpoint must equal its model as of
// every acknowledged operation, plus possibly the one in flight (which may or may not have
// committed). Rounds print
// their seed; ARCHIL_CRASH_SEED=S replays one, ARCHIL_CRASH_ROUNDS=N sets how many run (from
// ARCHIL_CRASH_FIRST_SEED, default 1000), ARCHIL_CRASH_SECONDS=S stops them after S seconds.
//
// The last line is "N crashes, 0 lost" (scripts/crashtest.sh reads it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include "base/log.h"
#include "engine/engine.h"
#include "engine/records/log_record.h"
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
  std::string failure;        // empty: nothing lost
  uint64_t tier_seals = 0;    // segments sealed by age (tiered rounds)
  uint64_t tier_uploads = 0;  // segments marked uploaded
};

// What the engine must hold: the heads (a disk and its branches) and the checkpoints, each as a
// model. Models are shared and copied on write, so a World is cheap to copy.
struct World {
  struct Head {
    DiskNo disk;
    std::shared_ptr<posix::ModelFs> model;
  };
  struct Ckpt {
    DiskNo disk;
    std::string name;
    std::shared_ptr<const posix::ModelFs> model;
  };
  std::vector<Head> heads;
  std::vector<Ckpt> ckpts;
  std::map<uint64_t, uint64_t> parent_of;  // branch -> the disk it was made from
  bool HasBranches(DiskNo d) const {
    for (const auto& [child, parent] : parent_of) {
      if (parent == d.value()) return true;
    }
    return false;
  }
};

// OK if the restarted engine holds exactly `w`: every head and every checkpoint.
Status Check(Engine* engine, const World& w) {
  std::vector<DiskNo> want;
  for (const World::Head& h : w.heads) want.push_back(h.disk);
  std::sort(want.begin(), want.end());
  if (engine->ListDisks() != want) return Status::Internal("the set of disks differs");
  for (const World::Head& h : w.heads) {
    posix::ModelFs model(*h.model);
    // Sessions do not survive the crash: their opens go on both sides.
    if (!model.DropHolder(posix::HolderId(1)).ok()) return Status::Internal("model drop holder");
    ARCHIL_ASSIGN_OR_RETURN(posix::FileSystem * fs, engine->Disk(h.disk));
    ARCHIL_RETURN_IF_ERROR(
        posix::CompareTrees(&model, fs).WithContext("disk " + std::to_string(h.disk.value())));
  }
  for (const World::Ckpt& c : w.ckpts) {
    ARCHIL_ASSIGN_OR_RETURN(std::shared_ptr<posix::FileSystem> view,
                            engine->OpenCheckpoint(c.disk, c.name));
    ARCHIL_RETURN_IF_ERROR(
        posix::CompareTrees(const_cast<posix::ModelFs*>(c.model.get()), view.get())
            .WithContext("checkpoint " + c.name + " of disk " + std::to_string(c.disk.value())));
  }
  return Status::Ok();
}

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
  o.auto_compactions = false;
  // Odd seeds run with a tier: segments wait for their upload, seal by age and are marked
  // uploaded along the way, drawn from a stream of their own so that even seeds replay as before.
  const bool tiered = seed % 2 == 1;
  o.keep_segments_until_uploaded = tiered;
  o.log_commits = tiered;
  std::mt19937_64 tier_rng(seed * 0x9E3779B97F4A7C15ull);
  auto opened = Engine::Open(o);
  if (!opened.ok()) return {false, "first open: " + opened.status().ToString()};
  std::unique_ptr<Engine> engine = std::move(opened).value();
  if (!engine->CreateDisk(DiskNo(1), {}).ok()) return {false, "create disk"};

  World acked;  // every acknowledged operation
  acked.heads.push_back({DiskNo(1), std::make_shared<posix::ModelFs>(&clock)});
  std::optional<World> in_flight;  // and the one the power cut interrupted
  std::map<uint64_t, std::pair<std::vector<posix::Ino>, std::vector<posix::Ino>>> handles;
  uint64_t next_disk = 2;
  posix::FsOpGenerator gen(seed);
  // Cut the power somewhere in the next few hundred mutating file operations.
  io::FaultRule cut;
  cut.ops = io::kSimMutating;
  cut.skip = rng() % 400;  // counts matching operations from now on
  cut.power_off = true;
  env.AddFaultRule(cut);
  const int ops = 60 + static_cast<int>(rng() % 160);
  for (int i = 0; i < ops; ++i) {
    World before = acked;
    const int dice = static_cast<int>(rng() % 100);
    World::Head& h = acked.heads[rng() % acked.heads.size()];
    std::string what;
    Status done;
    bool checked = false;  // a file operation compares its own outcome
    if (dice < 2) {
      // Some column families flushed, the others only in the WAL: recovery must put the
      // batches that span both back together (atomic_flush is off).
      std::vector<Cf> flush;
      for (size_t c = 1; c < kNumCfs; ++c) {
        if (rng() % 2) flush.push_back(static_cast<Cf>(c));
      }
      (void)engine->FlushColumnFamilies(flush);  // a power cut inside shows at the next op
      continue;
    } else if (dice < 4) {
      std::string name = "c" + std::to_string(i);
      what = "checkpoint " + name;
      done = engine->Checkpoint(h.disk, name).status();
      acked.ckpts.push_back({h.disk, name, h.model});
      h.model = std::make_shared<posix::ModelFs>(*h.model);  // the checkpoint's copy is frozen
    } else if (dice < 6 && !acked.ckpts.empty()) {
      size_t k = rng() % acked.ckpts.size();
      what = "delete checkpoint " + acked.ckpts[k].name;
      done = engine->DeleteCheckpoint(acked.ckpts[k].disk, acked.ckpts[k].name);
      acked.ckpts.erase(acked.ckpts.begin() + static_cast<ptrdiff_t>(k));
    } else if (dice < 8 && !acked.ckpts.empty() && acked.heads.size() < 4) {
      World::Ckpt c = acked.ckpts[rng() % acked.ckpts.size()];
      DiskNo child(next_disk++);
      what = "branch " + std::to_string(child.value()) + " from " + c.name;
      done = engine->CreateBranch(c.disk, c.name, child, "b" + std::to_string(child.value()));
      acked.parent_of[child.value()] = c.disk.value();
      acked.heads.push_back({child, std::make_shared<posix::ModelFs>(*c.model)});
    } else if (dice < 9 && acked.heads.size() > 1) {
      size_t k = 1 + rng() % (acked.heads.size() - 1);
      DiskNo d = acked.heads[k].disk;
      if (acked.HasBranches(d)) continue;
      what = "delete disk " + std::to_string(d.value());
      done = engine->DeleteDisk(d);
      // The purge runs in the background: wait for it, so each seed replays the same file
      // operations (a power cut inside it shows at the next operation).
      (void)engine->WaitForPurges();
      std::erase_if(acked.ckpts, [&](const World::Ckpt& c) { return c.disk == d; });
      acked.heads.erase(acked.heads.begin() + static_cast<ptrdiff_t>(k));
      acked.parent_of.erase(d.value());
    } else {
      auto& [he, hm] = handles[h.disk.value()];
      h.model = std::make_shared<posix::ModelFs>(*h.model);  // `before` keeps the old one
      posix::FsOp op = gen.Next(h.model.get(), hm.size());
      posix::FsOutcome want = posix::Apply(h.model.get(), op, &hm);
      posix::FsOutcome got = posix::Apply(*engine->Disk(h.disk), op, &he);
      what = posix::Describe(op);
      if (!env.powered_off() && !(got == want)) {
        return {false, "op " + std::to_string(i) + " " + what + " on disk " +
                           std::to_string(h.disk.value()) + ": engine errno " +
                           std::to_string(got.err) + ", model " + std::to_string(want.err)};
      }
      checked = true;
    }
    if (env.powered_off()) {
      // The op in flight may have committed, or not: only `before` was acknowledged.
      in_flight = std::move(acked);
      acked = std::move(before);
      out.crashed = true;
      break;
    }
    if (!checked && !done.ok()) {
      return {false, "op " + std::to_string(i) + " " + what + ": " + done.ToString()};
    }
    if (rng() % 50 == 0) (void)engine->SyncIntents();  // an I/O error here is a crash
    auto sealed_now = [&] {
      Result<std::vector<SealedSegment>> r = engine->SealedSegments();
      return r.ok() ? *r : std::vector<SealedSegment>{};
    };
    if (tiered && tier_rng() % 8 == 0) {
      const size_t was = sealed_now().size();
      (void)engine->SealSegmentsOlderThan(0);  // as above
      const size_t now = sealed_now().size();
      out.tier_seals += now > was ? now - was : 0;
    }
    if (tiered && tier_rng() % 4 == 0) {
      // The tier marks deleted disks in the bucket, after which the engine purges them.
      for (const auto& [disk, root] : engine->DeletionsToMark()) {
        (void)engine->DeletionMarked(disk);  // a power cut inside shows at the next op
      }
      (void)engine->WaitForPurges();
    }
    if (tiered && tier_rng() % 8 == 0) {
      for (const SealedSegment& s : sealed_now()) {
        if (tier_rng() % 2 && engine->SegmentUploaded(s.disk, s.seg, tier_rng() % 2).ok()) {
          ++out.tier_uploads;
        }
      }
    }
    clock.Advance(3);
  }
  engine.reset();  // the process dies
  env.PowerOff();
  env.Restart(seed);
  opened = Engine::Open(o);
  // A purge interrupted by the cut resumes in the background: let it finish before reading, so
  // each seed replays the same file operations.
  if (opened.ok()) (void)(*opened)->WaitForPurges();
  if (!opened.ok()) return {out.crashed, "reopen after power loss: " + opened.status().ToString()};
  engine = std::move(opened).value();
  for (const World::Head& h : acked.heads) {
    Result<posix::FileSystem*> fs = engine->Disk(h.disk);
    if (fs.ok() && !(*fs)->DropHolder(posix::HolderId(1)).ok()) {
      return {out.crashed, "drop holder"};
    }
  }
  if (in_flight) {
    for (const World::Head& h : in_flight->heads) {
      Result<posix::FileSystem*> fs = engine->Disk(h.disk);
      if (fs.ok() && !(*fs)->DropHolder(posix::HolderId(1)).ok()) {
        return {out.crashed, "drop holder"};
      }
    }
  }
  Status same = Check(engine.get(), acked);
  if (!same.ok() && in_flight && Check(engine.get(), *in_flight).ok()) same = Status::Ok();
  if (!same.ok()) return {out.crashed, "after restart: " + same.message()};
  Status invariants = engine->CheckInvariants();
  if (!invariants.ok()) return {out.crashed, "after restart: " + invariants.message()};
  if (tiered) {
    // The log survived with its commits: every record decodes, and seqs run 1, 2, 3...
    for (DiskNo d : engine->ListDisks()) {
      Result<std::vector<std::pair<Seq, std::string>>> log =
          engine->OutboxRecords(d, Seq(0), SIZE_MAX);
      if (!log.ok() || log->empty()) return {out.crashed, "no log for a disk after restart"};
      for (size_t k = 0; k < log->size(); ++k) {
        Result<LogRecord> r = DecodeLogRecord((*log)[k].second, d);
        if ((*log)[k].first.value() != k + 1 || !r.ok() || r->seq.value() != k + 1) {
          return {out.crashed, "log of disk " + std::to_string(d.value()) + " broken at " +
                                   std::to_string(k + 1)};
        }
      }
    }
  }
  // And it keeps working.
  Result<posix::FileSystem*> fs = engine->Disk(DiskNo(1));
  if (!fs.ok()) return {out.crashed, "disk 1 lost"};
  Result<posix::Attr> f = (*fs)->Mknod(posix::kRootIno, "after-crash", 0100644, 0, {});
  if (!f.ok() && f.status().sys_errno() != EEXIST) return {out.crashed, "write after restart"};
  if (!engine->Checkpoint(DiskNo(1), "after-crash").ok()) return {out.crashed, "checkpoint after"};
  return out;
}

TEST(EngineCrashTest, EveryAcknowledgedOperationSurvivesPowerLoss) {
  SetLogLevel(LogLevel::kWarn);  // each restart logs its intent replay at info
  const uint64_t first = EnvU64("ARCHIL_CRASH_SEED", EnvU64("ARCHIL_CRASH_FIRST_SEED", 1000));
  const uint64_t rounds = std::getenv("ARCHIL_CRASH_SEED") ? 1 : EnvU64("ARCHIL_CRASH_ROUNDS", 200);
  // ARCHIL_CRASH_SECONDS=S stops after the round that passes S seconds (0: no limit), and prints
  // a progress line every 10,000 rounds.
  const uint64_t seconds = EnvU64("ARCHIL_CRASH_SECONDS", 0);
  uint64_t crashes = 0, lost = 0, mid_op = 0, tier_seals = 0, tier_uploads = 0;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (uint64_t r = 0; r < rounds; ++r) {
    if (seconds > 0 && elapsed() >= static_cast<double>(seconds)) break;
    if (r > 0 && r % 10000 == 0) {
      std::printf("crash test: %llu rounds, %llu lost, %.0f s\n",
                  static_cast<unsigned long long>(r), static_cast<unsigned long long>(lost),
                  elapsed());
      std::fflush(stdout);
    }
    uint64_t seed = first + r;
    Round round = RunRound(seed);
    crashes += 1;
    mid_op += round.crashed;
    tier_seals += round.tier_seals;
    tier_uploads += round.tier_uploads;
    if (!round.failure.empty()) {
      ++lost;
      ADD_FAILURE() << "seed " << seed << " (replay: ARCHIL_CRASH_SEED=" << seed
                    << "): " << round.failure;
      if (lost >= 5) break;
    }
  }
  const double secs = elapsed();
  std::printf("crash test: %llu rounds in %.1f s (%.1f crashes/s), %llu cut inside an operation\n",
              static_cast<unsigned long long>(crashes), secs, static_cast<double>(crashes) / secs,
              static_cast<unsigned long long>(mid_op));
  std::printf("tiered rounds (odd seeds): %llu segments sealed by age, %llu marked uploaded\n",
              static_cast<unsigned long long>(tier_seals),
              static_cast<unsigned long long>(tier_uploads));
  std::printf("%llu crashes, %llu lost\n", static_cast<unsigned long long>(crashes),
              static_cast<unsigned long long>(lost));
}

}  // namespace
}  // namespace archil::engine
