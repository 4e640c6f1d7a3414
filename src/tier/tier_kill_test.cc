// The tier under a real kill -9: a disk survives both the crash of its server and then the loss
// of its directory, through the bucket.
//
// Each round: a child process (this binary, run with --child) opens a tiered engine on a fresh
// directory (sync=true, 512 KiB segments, seal by age after 30 ms) with a dir:// bucket beside
// it, starts the four machines on their background threads at short intervals (segment uploads,
// log shipping, snapshots after 16 KiB of log, collection with no grace period on even seeds and
// the default day on odd ones), and writes and removes files in its root. After each call
// returns OK it writes the operation's number to a pipe; the parent sends SIGKILL at a random
// moment, so the kill lands during uploads, shipping, snapshots and deletions. The parent then
//   0. recovers a copy of the bucket exactly as the kill left it, which must succeed and hold
//      what some prefix of the acknowledged operations made (the rest is the recovery point);
//   1. reopens the engine, whose tree must hold every acknowledged operation (the one in flight
//      may or may not have happened);
//   2. runs every machine until nothing is left to store (the crash's leftovers adopted or
//      overwritten, as tiering.md §1-§4 say), then writes one more file and ships it;
//   3. recovers an empty directory from the bucket, which must succeed (no object referenced but
//      missing, no snapshot published before its log) and equal the reopened engine, byte for
//      byte, times and block counts included.
// ARCHIL_TEST_SEED / ARCHIL_KILL_ROUNDS (default 12) / ARCHIL_KILL_DIR as engine_kill_test.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/test_seed.h"
#include "io/posix_env.h"
#include "posix/fs_driver.h"
#include "store/dir_store.h"
#include "tier/collector.h"
#include "tier/log_shipper.h"
#include "tier/recovery.h"
#include "tier/segment_uploader.h"
#include "tier/snapshotter.h"

extern char** environ;

namespace archil::tier {
namespace {

using engine::DiskNo;
using Files = std::map<std::string, std::string>;

uint64_t EnvU64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

engine::EngineOptions Options(const std::string& dir) {
  engine::EngineOptions o;
  o.env = io::PosixEnv();
  o.dir = dir;
  o.clock = &SystemClock::Instance();
  o.sync = true;
  o.segment_blocks = 128;
  o.intent_sync_ms = 10;
  o.seal_age_ms = 30;
  o.block_cache_mb = 8;
  o.log_commits = o.keep_segments_until_uploaded = true;
  return o;
}

// The machines, with `interval_ms` between passes when started.
struct Machines {
  Machines(engine::Engine* e, store::ObjectStore* s, int interval_ms, int64_t grace_ms = 0)
      : uploader([&] {
          SegmentUploaderOptions o;
          o.engine = e;
          o.store = s;
          o.interval_ms = interval_ms;
          return o;
        }()),
        shipper([&] {
          LogShipperOptions o;
          o.engine = e;
          o.store = s;
          o.max_object_bytes = 8 << 10;
          o.interval_ms = interval_ms;
          return o;
        }()),
        snapshotter([&] {
          SnapshotterOptions o;
          o.engine = e;
          o.store = s;
          o.clock = &SystemClock::Instance();
          o.log_bytes = 16 << 10;
          o.part_bytes = 16 << 10;
          o.interval_ms = interval_ms * 3;
          return o;
        }()),
        collector([&] {
          CollectorOptions o;
          o.engine = e;
          o.store = s;
          o.clock = &SystemClock::Instance();
          o.grace_ms = grace_ms;
          o.interval_ms = interval_ms * 5;
          return o;
        }()) {}
  void Start() {
    uploader.Start();
    shipper.Start();
    snapshotter.Start();
    collector.Start();
  }
  SegmentUploader uploader;
  LogShipper shipper;
  Snapshotter snapshotter;
  Collector collector;
};

// Operation i of a round: write file f<k> whole (1 B .. 160 KiB), or remove it.
struct Op {
  std::string name;
  bool remove = false;
  std::string data;
};
Op NextOp(uint64_t seed, uint64_t i, const Files& files) {
  std::mt19937_64 rng(seed * 1000003 + i);
  Op op;
  op.name = "f" + std::to_string(rng() % 10);
  if (files.count(op.name) && rng() % 4 == 0) {
    op.remove = true;
    return op;
  }
  op.data.resize(1 + rng() % (160 << 10));
  for (size_t j = 0; j < op.data.size(); j += 8) op.data[j] = static_cast<char>(rng());
  return op;
}
void ApplyToModel(const Op& op, Files* files) {
  if (op.remove) {
    files->erase(op.name);
  } else {
    (*files)[op.name] = op.data;
  }
}
Status ApplyToEngine(posix::FileSystem* fs, const Op& op) {
  Result<posix::Attr> a = fs->Lookup(posix::kRootIno, op.name);
  if (op.remove) return fs->Unlink(posix::kRootIno, op.name);
  if (!a.ok()) a = fs->Mknod(posix::kRootIno, op.name, S_IFREG | 0644, 0, {});
  if (!a.ok()) return a.status();
  posix::SetAttrRequest trunc;
  trunc.size = 0;
  ARCHIL_RETURN_IF_ERROR(fs->SetAttr(a->ino, trunc).status());
  return fs->Write(a->ino, 0, op.data).status();
}

Result<Files> ReadTree(posix::FileSystem* fs) {
  Files out;
  ARCHIL_ASSIGN_OR_RETURN(posix::DirPage page, fs->ReadDir(posix::kRootIno, 0, 1000));
  for (const posix::DirEntry& e : page.entries) {
    ARCHIL_ASSIGN_OR_RETURN(posix::Attr a, fs->GetAttr(e.ino));
    ARCHIL_ASSIGN_OR_RETURN(out[e.name], fs->Read(e.ino, 0, a.size));
  }
  return out;
}

// Even seeds collect with no grace period, odd ones with the default (a day: nothing goes).
int64_t GraceMs(uint64_t seed) { return seed % 2 == 0 ? 0 : CollectorOptions().grace_ms; }

int ChildMain(const std::string& dir, uint64_t seed) {
  auto bucket = store::DirStore::Open(dir + "/bucket");
  auto opened = engine::Engine::Open(Options(dir + "/engine"));
  if (!bucket.ok() || !opened.ok()) return 2;
  std::unique_ptr<engine::Engine> e = std::move(opened).value();
  if (!e->CreateDisk(DiskNo(1), {}).ok()) return 2;
  posix::FileSystem* fs = *e->Disk(DiskNo(1));
  Machines machines(e.get(), bucket->get(), 10, GraceMs(seed));
  machines.Start();
  if (::write(1, "ready\n", 6) != 6) return 3;
  Files files;
  for (uint64_t i = 0;; ++i) {
    const Op op = NextOp(seed, i, files);
    if (Status s = ApplyToEngine(fs, op); !s.ok()) {
      std::fprintf(stderr, "child: op %llu: %s\n", (unsigned long long)i, s.ToString().c_str());
      return 2;
    }
    const std::string ack = std::to_string(i) + "\n";
    if (::write(1, ack.data(), ack.size()) != static_cast<ssize_t>(ack.size())) return 3;
    ApplyToModel(op, &files);
  }
}

// Recovers a copy of the bucket as the kill left it into a fresh directory: "" if that
// succeeds and the disk equals what the first k of the `acked` operations made, for some k
// (or the (k+1)-th half done: a write in flight is a truncate then a write); `lost` says how
// many acknowledged operations the bucket did not have yet.
std::string RecoverFromCrashTimeBucket(const std::string& dir, uint64_t seed, uint64_t acked,
                                       std::string* lost) {
  std::error_code ec;
  std::filesystem::copy(dir + "/bucket", dir + "/bucket-at-kill",
                        std::filesystem::copy_options::recursive, ec);
  if (ec) return "copy the bucket: " + ec.message();
  auto bucket = store::DirStore::Open(dir + "/bucket-at-kill");
  if (!bucket.ok()) return bucket.status().ToString();
  Result<RecoveryReport> r = RecoverFromStore(Options(dir + "/from-kill"), bucket->get());
  if (!r.ok()) return r.status().ToString();
  auto opened = engine::Engine::Open(Options(dir + "/from-kill"));
  if (!opened.ok()) return "open: " + opened.status().ToString();
  Result<posix::FileSystem*> fs = (*opened)->Disk(DiskNo(1));
  if (!fs.ok()) {
    // Nothing of the disk was shipped yet: only an empty prefix can match.
    *lost = "nothing (" + std::to_string(acked) + " operations not yet shipped)";
    return "";
  }
  Result<Files> got = ReadTree(*fs);
  if (!got.ok()) return "read: " + got.status().ToString();
  Files model;
  for (uint64_t k = 0; k <= acked; ++k) {
    if (*got == model) {
      *lost = std::to_string(acked - k) + " of " + std::to_string(acked) + " operations lost";
      return "";
    }
    const Op op = NextOp(seed, k, model);
    if (!op.remove) {
      Files half = model;
      half[op.name] = "";
      if (*got == half) {
        *lost = std::to_string(acked - k) + " of " + std::to_string(acked) + " operations lost";
        return "";
      }
    }
    ApplyToModel(op, &model);
  }
  return "the recovered disk is no prefix of the " + std::to_string(acked) +
         " acknowledged operations (" + std::to_string(got->size()) + " files)";
}

// "" if the round kept everything, else what went wrong. `stats` gets a line of counts.
std::string RunRound(const std::string& dir, uint64_t seed, std::string* stats) {
  std::mt19937_64 rng(seed);
  const auto kill_after = std::chrono::milliseconds(100 + rng() % 1500);
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string seed_arg = std::to_string(seed);
  std::vector<char*> argv = {self.data(), const_cast<char*>("--child"),
                             const_cast<char*>(dir.c_str()), seed_arg.data(), nullptr};
  pid_t pid;
  const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) return "posix_spawn failed";
  FILE* acks = ::fdopen(fds[0], "r");
  char line[64];
  if (!std::fgets(line, sizeof line, acks) || std::string(line) != "ready\n") {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    std::fclose(acks);
    return "the child did not get ready";
  }
  std::thread killer([pid, kill_after] {
    std::this_thread::sleep_for(kill_after);
    ::kill(pid, SIGKILL);
  });
  Files acked;
  uint64_t n = 0;
  while (std::fgets(line, sizeof line, acks)) {
    if (std::to_string(n) + "\n" != line) return "ack out of order: " + std::string(line);
    ApplyToModel(NextOp(seed, n, acked), &acked);
    ++n;
  }
  killer.join();
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::fclose(acks);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) return "the child ended by itself";

  // 0. The bucket exactly as the kill left it recovers a consistent prefix of what was
  // acknowledged: no object it needs is missing (the acknowledged operations after that prefix
  // are the recovery point).
  std::string lost;
  if (std::string why = RecoverFromCrashTimeBucket(dir, seed, n, &lost); !why.empty()) {
    return "recovery from the bucket as the kill left it: " + why;
  }

  // 1. Reopened, the engine holds every acknowledged operation.
  Files with_next = acked;
  ApplyToModel(NextOp(seed, n, acked), &with_next);
  auto bucket = store::DirStore::Open(dir + "/bucket");
  if (!bucket.ok()) return "bucket: " + bucket.status().ToString();
  auto opened = engine::Engine::Open(Options(dir + "/engine"));
  if (!opened.ok()) return "reopen: " + opened.status().ToString();
  std::unique_ptr<engine::Engine> e = std::move(opened).value();
  posix::FileSystem* fs = *e->Disk(DiskNo(1));
  Result<Files> got = ReadTree(fs);
  if (!got.ok()) return "read the reopened tree: " + got.status().ToString();
  // A write in flight is a truncate then a write: it may also have stopped in between.
  Files truncated = acked;
  const Op next = NextOp(seed, n, acked);
  if (!next.remove) truncated[next.name] = "";
  if (*got != acked && *got != with_next && *got != truncated) {
    std::string diff;
    for (const auto& [name, data] : acked) {
      auto it = got->find(name);
      if (it == got->end())
        diff += " " + name + " missing;";
      else if (it->second != data) {
        diff += " " + name + " has " + std::to_string(it->second.size()) + " bytes, want " +
                std::to_string(data.size()) + ";";
      }
    }
    return "after " + std::to_string(n) +
           " acknowledged operations, the reopened engine lost"
           " some (in flight: " +
           next.name + "):" + diff;
  }

  // 2. Everything to the store: a crash's leftovers adopted or overwritten.
  Machines m(e.get(), bucket->get(), 10);
  for (int i = 0; i < 3; ++i) {
    for (Status s : {e->SealSegmentsOlderThan(0), m.uploader.Pass(), m.shipper.Pass(),
                     m.snapshotter.Pass(), m.shipper.Pass(), m.collector.Pass()}) {
      if (!s.ok()) return "drain: " + s.ToString();
    }
  }
  // And one write after the last snapshot, so that recovery replays log on top of it.
  if (Status s = ApplyToEngine(fs, Op{"after", false, "written after the snapshot"}); !s.ok()) {
    return "write after the drain: " + s.ToString();
  }
  for (Status s :
       {e->SealSegmentsOlderThan(0), m.uploader.Pass(), m.shipper.Pass(), m.shipper.Pass()}) {
    if (!s.ok()) return "ship: " + s.ToString();
  }
  if (m.shipper.stats().waiting_records != 0) return "records left unshipped";

  // 3. A fresh directory from the bucket equals the reopened engine.
  Result<RecoveryReport> r = RecoverFromStore(Options(dir + "/fresh"), bucket->get());
  if (!r.ok()) return "recovery: " + r.status().ToString();
  auto fresh = engine::Engine::Open(Options(dir + "/fresh"));
  if (!fresh.ok()) return "open the recovered engine: " + fresh.status().ToString();
  posix::CompareOptions exact;
  exact.times = true;
  exact.blocks = true;
  if (Status s = posix::CompareTrees(fs, *(*fresh)->Disk(DiskNo(1)), exact); !s.ok()) {
    return "the recovered disk differs: " + s.ToString();
  }
  *stats = std::to_string(n) + " acked, " + std::to_string(r->snapshots) + " snapshot, " +
           std::to_string(r->records) + " records, " + std::to_string(r->segments) +
           " segments recovered; from the crash-time bucket " + lost;
  return "";
}

TEST(TierKillTest, AKilledServerLosesNothingAndItsBucketRecoversItsDisk) {
  const uint64_t base = TestSeed();
  const uint64_t rounds = EnvU64("ARCHIL_KILL_ROUNDS", 12);
  const char* root_env = std::getenv("ARCHIL_KILL_DIR");
  std::string tmpl =
      std::string(root_env && *root_env ? root_env : "/var/tmp") + "/tier_kill_test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  uint64_t failed = 0;
  for (uint64_t r = 0; r < rounds; ++r) {
    const uint64_t seed = base + r;
    const std::string dir = tmpl + "/" + std::to_string(seed);
    std::string stats;
    const std::string failure = RunRound(dir, seed, &stats);
    if (!failure.empty()) {
      ++failed;
      ADD_FAILURE() << "seed " << seed << " (replay: ARCHIL_TEST_SEED=" << seed
                    << " ARCHIL_KILL_ROUNDS=1; directory kept: " << dir << "): " << failure;
      continue;
    }
    std::printf("seed %llu: %s\n", (unsigned long long)seed, stats.c_str());
    std::filesystem::remove_all(dir);
  }
  if (failed == 0) std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace archil::tier

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--child") {
    return archil::tier::ChildMain(argv[2], std::strtoull(argv[3], nullptr, 10));
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
