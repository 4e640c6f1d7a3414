#include "io/sim_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <random>
#include <thread>

#include "base/test_seed.h"

namespace archil::io {
namespace {

OpenOptions Create() {
  OpenOptions o;
  o.create = true;
  return o;
}

// Creates (or replaces the contents of) `path`; syncs the data if `sync`.
void Write(Env* env, const std::string& path, const std::string& contents, bool sync) {
  OpenOptions o = Create();
  o.truncate = true;
  auto f = env->OpenFile(path, o);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE((*f)->Pwrite(0, contents).ok());
  if (sync) {
    ASSERT_TRUE((*f)->Sync().ok());
  }
  ASSERT_TRUE((*f)->Close().ok());
}

// The contents of `path`, or "<missing>".
std::string Read(Env* env, const std::string& path) {
  OpenOptions o;
  o.read_only = true;
  auto f = env->OpenFile(path, o);
  if (!f.ok()) return ErrnoFor(f.status()) == ENOENT ? "<missing>" : f.status().ToString();
  auto size = (*f)->Size();
  if (!size.ok()) return size.status().ToString();
  std::string buf(*size, '\0');
  auto n = (*f)->Pread(0, buf.size(), buf.data());
  if (!n.ok()) return n.status().ToString();
  buf.resize(*n);
  return buf;
}

std::vector<std::string> List(Env* env, const std::string& dir) {
  auto names = env->ListDir(dir);
  EXPECT_TRUE(names.ok()) << names.status().ToString();
  if (!names.ok()) return {};
  std::sort(names->begin(), names->end());
  return *names;
}

TEST(SimEnv, SyncedDataAndSyncedNamesSurvivePowerLoss) {
  SimEnv env;
  ASSERT_TRUE(env.CreateDir("/d").ok());
  ASSERT_TRUE(env.SyncDir("/").ok());
  Write(&env, "/d/f", "durable", /*sync=*/true);
  ASSERT_TRUE(env.SyncDir("/d").ok());
  env.SimulatePowerLoss(1);
  EXPECT_EQ(Read(&env, "/d/f"), "durable");
  EXPECT_EQ(List(&env, "/d"), std::vector<std::string>{"f"});
  // After the restart everything is durable: a second power loss changes nothing.
  env.SimulatePowerLoss(2);
  EXPECT_EQ(Read(&env, "/d/f"), "durable");
}

TEST(SimEnv, UnsyncedWritesAreTornOnlyAtSectorsWithinTheirRange) {
  const uint64_t seed = TestSeed(20261130);
  SCOPED_TRACE(SeedTrace(seed));
  constexpr size_t kOld = 8 * SimEnv::kSectorSize;
  constexpr size_t kLo = 700, kHi = 3000;  // the un-synced overwrite, not sector-aligned
  int kept = 0, dropped = 0;
  for (uint64_t round = 0; round < 64; ++round) {
    SimEnv env;
    Write(&env, "/f", std::string(kOld, 'a'), /*sync=*/true);
    ASSERT_TRUE(env.SyncDir("/").ok());
    auto f = env.OpenFile("/f", OpenOptions());
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Pwrite(kLo, std::string(kHi - kLo, 'b')).ok());
    ASSERT_TRUE((*f)->Pwrite(kOld, std::string(1000, 'c')).ok());  // un-synced growth
    env.SimulatePowerLoss(seed + round);
    std::string got = Read(&env, "/f");
    ASSERT_EQ(got.size(), kOld) << "un-synced growth must be lost";
    for (size_t i = 0; i < kOld; ++i) {
      if (i < kLo || i >= kHi) {
        ASSERT_EQ(got[i], 'a') << "outside the write, byte " << i;
      }
    }
    for (size_t s = kLo / SimEnv::kSectorSize; s * SimEnv::kSectorSize < kHi; ++s) {
      size_t lo = std::max(kLo, s * SimEnv::kSectorSize);
      size_t hi = std::min(kHi, (s + 1) * SimEnv::kSectorSize);
      std::string part = got.substr(lo, hi - lo);
      bool all_old = part == std::string(hi - lo, 'a');
      bool all_new = part == std::string(hi - lo, 'b');
      ASSERT_TRUE(all_old || all_new) << "sector " << s << " is torn inside";
      (all_new ? kept : dropped)++;
    }
  }
  // Both outcomes occur: the model really tears, and really drops.
  EXPECT_GT(kept, 0);
  EXPECT_GT(dropped, 0);
}

TEST(SimEnv, UnsyncedTruncateGrowthIsLostAndSyncedGrowthKept) {
  SimEnv env;
  Write(&env, "/f", "abc", /*sync=*/true);
  ASSERT_TRUE(env.SyncDir("/").ok());
  {
    auto f = env.OpenFile("/f", OpenOptions());
    ASSERT_TRUE((*f)->Truncate(5000).ok());
  }
  env.SimulatePowerLoss(3);
  EXPECT_EQ(Read(&env, "/f"), "abc");
  {
    auto f = env.OpenFile("/f", OpenOptions());
    ASSERT_TRUE((*f)->Truncate(5000).ok());
    ASSERT_TRUE((*f)->Sync().ok());
  }
  env.SimulatePowerLoss(4);
  EXPECT_EQ(Read(&env, "/f").size(), 5000u);
}

TEST(SimEnv, UnsyncedGrowthMaySurviveWhenAskedWithSectorsOfNewBytesOrZeros) {
  const uint64_t seed = TestSeed(99);
  SCOPED_TRACE(SeedTrace(seed));
  SimEnv::Options options;
  options.unsynced_growth_may_survive = true;
  constexpr size_t kOld = 700, kNew = 3000;  // growth starts inside a sector
  int lost = 0, kept = 0, new_sectors = 0, zero_sectors = 0;
  for (uint64_t round = 0; round < 64; ++round) {
    SimEnv env(options);
    Write(&env, "/wal", std::string(kOld, 'a'), /*sync=*/true);
    ASSERT_TRUE(env.SyncDir("/").ok());
    auto f = env.OpenFile("/wal", OpenOptions());
    ASSERT_TRUE((*f)->Pwrite(kOld, std::string(kNew - kOld, 'b')).ok());
    env.SimulatePowerLoss(seed + round);
    std::string got = Read(&env, "/wal");
    ASSERT_TRUE(got.size() == kOld || got.size() == kNew) << got.size();
    ASSERT_EQ(got.substr(0, kOld), std::string(kOld, 'a')) << "synced bytes never change";
    if (got.size() == kOld) {
      lost++;
      continue;
    }
    kept++;
    for (size_t lo = 0; lo < kNew; lo += SimEnv::kSectorSize) {
      size_t from = std::max(lo, kOld);
      size_t hi = std::min(lo + SimEnv::kSectorSize, kNew);
      if (from >= hi) continue;
      std::string part = got.substr(from, hi - from);
      bool is_new = part == std::string(hi - from, 'b');
      bool is_zero = part == std::string(hi - from, '\0');
      ASSERT_TRUE(is_new || is_zero) << "sector at " << lo;
      (is_new ? new_sectors : zero_sectors)++;
    }
  }
  EXPECT_GT(lost, 0);
  EXPECT_GT(kept, 0);
  EXPECT_GT(new_sectors, 0);
  EXPECT_GT(zero_sectors, 0);
}

// With a suffix, only files named with it may keep un-synced growth; the others always lose it.
TEST(SimEnv, UnsyncedGrowthSurvivesOnlyForTheSuffix) {
  const uint64_t seed = TestSeed(77);
  SCOPED_TRACE(SeedTrace(seed));
  SimEnv::Options options;
  options.unsynced_growth_may_survive = true;
  options.unsynced_growth_suffix = ".log";
  int wal_kept = 0;
  for (uint64_t round = 0; round < 32; ++round) {
    SimEnv env(options);
    for (const char* path : {"/a.log", "/MANIFEST-1"}) {
      Write(&env, path, std::string(512, 'a'), /*sync=*/true);
    }
    ASSERT_TRUE(env.SyncDir("/").ok());
    for (const char* path : {"/a.log", "/MANIFEST-1"}) {
      auto f = env.OpenFile(path, OpenOptions());
      ASSERT_TRUE((*f)->Pwrite(512, std::string(1024, 'b')).ok());
    }
    env.SimulatePowerLoss(seed + round);
    EXPECT_EQ(Read(&env, "/MANIFEST-1").size(), 512u) << "round " << round;
    if (Read(&env, "/a.log").size() > 512) wal_kept++;
  }
  EXPECT_GT(wal_kept, 0);
}

TEST(SimEnv, CreatedAndSyncedFileIsLostWithoutDirSync) {
  SimEnv env;
  Write(&env, "/lost", "data", /*sync=*/true);
  ASSERT_TRUE(env.CreateDir("/dir").ok());
  env.SimulatePowerLoss(5);
  EXPECT_FALSE(*env.FileExists("/lost"));
  EXPECT_FALSE(*env.FileExists("/dir"));
  EXPECT_EQ(env.used_bytes(), 0u);

  // Named durably but never synced: the name survives, the data does not (size 0).
  Write(&env, "/empty", "data", /*sync=*/false);
  ASSERT_TRUE(env.SyncDir("/").ok());
  env.SimulatePowerLoss(6);
  EXPECT_EQ(Read(&env, "/empty"), "");
}

TEST(SimEnv, FilesInAnUnsyncedDirectoryVanishWithIt) {
  SimEnv env;
  ASSERT_TRUE(env.CreateDir("/d").ok());
  Write(&env, "/d/f", "x", /*sync=*/true);
  ASSERT_TRUE(env.SyncDir("/d").ok());  // the entry is durable, but "/d" itself is not
  env.SimulatePowerLoss(7);
  EXPECT_FALSE(*env.FileExists("/d"));
  EXPECT_FALSE(*env.FileExists("/d/f"));
}

TEST(SimEnv, RenameIsAtomicWithRespectToDirSync) {
  for (bool sync_dir : {false, true}) {
    SCOPED_TRACE(sync_dir ? "dir synced" : "dir not synced");
    SimEnv env;
    Write(&env, "/x", std::string(2000, 'o'), /*sync=*/true);
    ASSERT_TRUE(env.SyncDir("/").ok());
    Write(&env, "/x.tmp", std::string(3000, 'n'), /*sync=*/true);
    ASSERT_TRUE(env.Rename("/x.tmp", "/x").ok());
    EXPECT_EQ(Read(&env, "/x"), std::string(3000, 'n'));
    if (sync_dir) {
      ASSERT_TRUE(env.SyncDir("/").ok());
    }
    env.SimulatePowerLoss(8);
    EXPECT_EQ(Read(&env, "/x"), std::string(sync_dir ? 3000 : 2000, sync_dir ? 'n' : 'o'));
    EXPECT_EQ(List(&env, "/"), std::vector<std::string>{"x"});
  }
}

TEST(SimEnv, RenameAcrossDirectoriesShowsExactlyOneName) {
  for (int synced : {0, 1, 2}) {  // none, the source dir, the target dir
    SCOPED_TRACE("synced " + std::to_string(synced));
    SimEnv env;
    ASSERT_TRUE(env.CreateDir("/a").ok());
    ASSERT_TRUE(env.CreateDir("/b").ok());
    ASSERT_TRUE(env.SyncDir("/").ok());
    Write(&env, "/a/f", "v", /*sync=*/true);
    ASSERT_TRUE(env.SyncDir("/a").ok());
    ASSERT_TRUE(env.Rename("/a/f", "/b/g").ok());
    if (synced == 1) {
      ASSERT_TRUE(env.SyncDir("/a").ok());
    }
    if (synced == 2) {
      ASSERT_TRUE(env.SyncDir("/b").ok());
    }
    env.SimulatePowerLoss(9);
    bool old_name = *env.FileExists("/a/f");
    bool new_name = *env.FileExists("/b/g");
    EXPECT_NE(old_name, new_name) << "exactly one of the names";
    EXPECT_EQ(new_name, synced != 0);
    EXPECT_EQ(Read(&env, new_name ? "/b/g" : "/a/f"), "v");
  }
}

TEST(SimEnv, LinkAndUnlinkAreDurableAfterDirSync) {
  SimEnv env;
  Write(&env, "/f", "data", /*sync=*/true);
  ASSERT_TRUE(env.SyncDir("/").ok());
  ASSERT_TRUE(env.Link("/f", "/g").ok());
  EXPECT_EQ(env.Stat("/f")->nlink, 2u);
  EXPECT_EQ(ErrnoFor(env.Link("/f", "/g")), EEXIST);
  env.SimulatePowerLoss(10);
  EXPECT_FALSE(*env.FileExists("/g")) << "un-synced link";

  ASSERT_TRUE(env.Link("/f", "/g").ok());
  ASSERT_TRUE(env.SyncDir("/").ok());
  ASSERT_TRUE(env.Unlink("/f").ok());
  env.SimulatePowerLoss(11);
  EXPECT_EQ(Read(&env, "/f"), "data") << "un-synced unlink is undone";
  EXPECT_EQ(Read(&env, "/g"), "data");
  EXPECT_EQ(env.Stat("/g")->nlink, 2u);

  ASSERT_TRUE(env.Unlink("/f").ok());
  ASSERT_TRUE(env.Unlink("/g").ok());
  ASSERT_TRUE(env.SyncDir("/").ok());
  env.SimulatePowerLoss(12);
  EXPECT_EQ(List(&env, "/"), std::vector<std::string>{});
  EXPECT_EQ(env.used_bytes(), 0u);
}

TEST(SimEnv, UnlinkedOpenFileStaysReadableUntilClosed) {
  SimEnv env;
  Write(&env, "/f", "data", /*sync=*/false);
  auto f = env.OpenFile("/f", OpenOptions());
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(env.Unlink("/f").ok());
  EXPECT_EQ(env.used_bytes(), 4u);
  char buf[4];
  EXPECT_EQ(*(*f)->Pread(0, 4, buf), 4u);
  EXPECT_EQ(std::string(buf, 4), "data");
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(env.used_bytes(), 0u);
}

TEST(SimEnv, PosixErrnos) {
  SimEnv env;
  EXPECT_EQ(env.OpenFile("/nope", OpenOptions()).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ErrnoFor(env.OpenFile("/nope", OpenOptions()).status()), ENOENT);
  EXPECT_EQ(ErrnoFor(env.OpenFile("/no/such", Create()).status()), ENOENT);
  ASSERT_TRUE(env.CreateDir("/d").ok());
  EXPECT_EQ(ErrnoFor(env.CreateDir("/d")), EEXIST);
  EXPECT_EQ(env.CreateDir("/d").code(), Status::Code::kAlreadyExists);
  EXPECT_EQ(ErrnoFor(env.OpenFile("/d", OpenOptions()).status()), EISDIR);
  Write(&env, "/d/f", "", false);
  EXPECT_EQ(ErrnoFor(env.RemoveDir("/d")), ENOTEMPTY);
  EXPECT_EQ(ErrnoFor(env.OpenFile("/d/f/x", Create()).status()), ENOTDIR);
  EXPECT_EQ(ErrnoFor(env.Rename("/d/f", "/d")), EISDIR);
  EXPECT_EQ(ErrnoFor(env.Rename("/d", "/d/sub")), EINVAL);
  EXPECT_EQ(ErrnoFor(env.Unlink("/d")), EISDIR);
  EXPECT_EQ(ErrnoFor(env.Link("/d", "/e")), EPERM);
  OpenOptions excl = Create();
  excl.exclusive = true;
  EXPECT_EQ(ErrnoFor(env.OpenFile("/d/f", excl).status()), EEXIST);
  EXPECT_EQ(ErrnoFor(env.OpenFile("relative", Create()).status()), EINVAL);
  OpenOptions ro;
  ro.read_only = true;
  auto f = env.OpenFile("/d/f", ro);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(ErrnoFor((*f)->Pwrite(0, "x")), EBADF);
}

TEST(SimEnv, NoSpaceFailsWithoutSideEffectAndFreeingHelps) {
  SimEnv::Options options;
  options.capacity_bytes = 10000;
  SimEnv env(options);
  Write(&env, "/big", std::string(8000, 'b'), /*sync=*/true);
  auto f = env.OpenFile("/small", Create());
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Pwrite(0, std::string(1000, 's')).ok());
  Status s = (*f)->Pwrite(1000, std::string(4000, 's'));
  EXPECT_EQ(s.code(), Status::Code::kNoSpace);
  EXPECT_EQ(ErrnoFor(s), ENOSPC);
  EXPECT_EQ(*(*f)->Size(), 1000u) << "a failed write has no effect";
  EXPECT_EQ(ErrnoFor((*f)->Allocate(0, 20000, /*keep_size=*/true)), ENOSPC);
  EXPECT_EQ(ErrnoFor((*f)->Truncate(20000)), ENOSPC);
  EXPECT_EQ(env.used_bytes(), 9000u);
  ASSERT_TRUE(env.Unlink("/big").ok());
  EXPECT_EQ(env.used_bytes(), 1000u);
  EXPECT_TRUE((*f)->Pwrite(1000, std::string(4000, 's')).ok());
  EXPECT_TRUE((*f)->Allocate(0, 9000, /*keep_size=*/true).ok());
  EXPECT_EQ(*(*f)->Size(), 5000u);
  EXPECT_EQ(env.used_bytes(), 9000u);
  // Growing keeps what was preallocated; shrinking gives it back with the rest (ftruncate(2)).
  ASSERT_TRUE((*f)->Truncate(6000).ok());
  EXPECT_EQ(env.used_bytes(), 9000u);
  ASSERT_TRUE((*f)->Truncate(3000).ok());
  EXPECT_EQ(env.used_bytes(), 3000u);
  ASSERT_TRUE((*f)->Allocate(0, 8000, /*keep_size=*/true).ok());
  EXPECT_EQ(env.used_bytes(), 8000u);
  ASSERT_TRUE((*f)->Truncate(3000).ok());  // the same size: the preallocated tail goes
  EXPECT_EQ(env.used_bytes(), 3000u);
}

TEST(SimEnv, FaultRuleFailsTheChosenOperationWithoutEffect) {
  SimEnv env;
  Write(&env, "/wal", "one", /*sync=*/true);
  ASSERT_TRUE(env.SyncDir("/").ok());
  FaultRule rule;
  rule.ops = kSimSync;
  rule.path_contains = "wal";
  rule.skip = 1;
  rule.times = 1;
  rule.error = EIO;
  env.AddFaultRule(rule);
  auto f = env.OpenFile("/wal", OpenOptions());
  ASSERT_TRUE((*f)->Pwrite(3, "two").ok());
  ASSERT_TRUE((*f)->Sync().ok());  // skipped
  ASSERT_TRUE((*f)->Pwrite(6, "three").ok());
  Status s = (*f)->Sync();
  EXPECT_EQ(ErrnoFor(s), EIO);  // the second matching sync fails
  EXPECT_EQ(env.injected_faults(), 1u);
  Write(&env, "/other", "x", /*sync=*/true);  // another path: no match
  env.SimulatePowerLoss(13);
  EXPECT_EQ(Read(&env, "/wal"), "onetwo") << "the failed sync made nothing durable";

  SimEnv env2;
  FaultRule nospace;
  nospace.ops = kSimWrite;
  nospace.error = ENOSPC;
  nospace.times = 0;  // forever
  env2.AddFaultRule(nospace);
  auto g = env2.OpenFile("/g", Create());
  EXPECT_EQ(ErrnoFor((*g)->Pwrite(0, "x")), ENOSPC);
  EXPECT_EQ(ErrnoFor((*g)->Pwrite(0, "x")), ENOSPC);
  env2.ClearFaultRules();
  EXPECT_TRUE((*g)->Pwrite(0, "x").ok());
}

TEST(SimEnv, PowerOffFailsEverythingAndOldHandlesStayDead) {
  SimEnv env;
  Write(&env, "/f", "abc", /*sync=*/true);
  ASSERT_TRUE(env.SyncDir("/").ok());
  auto f = env.OpenFile("/f", OpenOptions());
  auto lock = env.LockFile("/LOCK");
  ASSERT_TRUE(lock.ok());
  EXPECT_EQ(ErrnoFor(env.LockFile("/LOCK").status()), EWOULDBLOCK);
  env.PowerOff();
  EXPECT_TRUE(env.powered_off());
  EXPECT_EQ(ErrnoFor((*f)->Pwrite(0, "x")), EIO);
  EXPECT_EQ(ErrnoFor(env.OpenFile("/f", OpenOptions()).status()), EIO);
  EXPECT_EQ(ErrnoFor(env.SyncDir("/")), EIO);
  env.Restart(14);
  char buf[3];
  EXPECT_EQ(ErrnoFor((*f)->Pread(0, 3, buf).status()), EIO) << "a handle from before the crash";
  EXPECT_TRUE(env.LockFile("/LOCK").ok()) << "locks die with the process";
  EXPECT_TRUE(env.UnlockFile(std::move(lock).value()).ok());
  EXPECT_EQ(Read(&env, "/f"), "abc");
}

TEST(SimEnv, PowerCutRuleCrashesJustBeforeTheNthOperation) {
  SimEnv env;
  FaultRule cut;
  cut.ops = kSimMutating;
  cut.skip = 3;  // open, pwrite, sync pass; the 4th mutating op (SyncDir) never happens
  cut.power_off = true;
  env.AddFaultRule(cut);
  auto f = env.OpenFile("/f", Create());
  ASSERT_TRUE((*f)->Pwrite(0, "x").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  EXPECT_FALSE(env.SyncDir("/").ok());
  EXPECT_TRUE(env.powered_off());
  EXPECT_FALSE(env.Stat("/f").ok());
  env.Restart(15);
  EXPECT_FALSE(*env.FileExists("/f"));
}

TEST(SimEnv, ConcurrentUseFromManyThreads) {
  const uint64_t seed = TestSeed(777);
  SCOPED_TRACE(SeedTrace(seed));
  SimEnv env;
  constexpr int kThreads = 4, kFiles = 50;
  for (int t = 0; t < kThreads; ++t) ASSERT_TRUE(env.CreateDir("/t" + std::to_string(t)).ok());
  ASSERT_TRUE(env.SyncDir("/").ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed + t);
      std::string dir = "/t" + std::to_string(t);
      for (int i = 0; i < kFiles; ++i) {
        std::string tmp = dir + "/tmp" + std::to_string(i);
        std::string name = dir + "/f" + std::to_string(i);
        std::string data(1 + rng() % 3000, static_cast<char>('a' + t));
        auto f = env.OpenFile(tmp, Create());
        if (!f.ok() || !(*f)->Pwrite(0, data).ok() || !(*f)->Sync().ok()) failures++;
        if (!env.Rename(tmp, name).ok() || !env.SyncDir(dir).ok()) failures++;
        if (!env.ListDir("/").ok() || !env.Stat(name).ok()) failures++;
        if (rng() % 4 == 0 && !env.Unlink(name).ok()) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  env.SimulatePowerLoss(seed);
  for (int t = 0; t < kThreads; ++t) {
    for (const std::string& name : List(&env, "/t" + std::to_string(t))) {
      ASSERT_EQ(name[0], 'f') << "temporaries were renamed, and synced";
      std::string data = Read(&env, "/t" + std::to_string(t) + "/" + name);
      ASSERT_FALSE(data.empty());
      EXPECT_EQ(data, std::string(data.size(), static_cast<char>('a' + t)));
    }
  }
}

}  // namespace
}  // namespace archil::io
