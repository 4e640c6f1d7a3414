// Differential test of `archil mount` against a local file system (ext4): random operation
// sequences run in lockstep on a real FUSE mount and on a directory under /var/tmp, and every
// result must be the same — return value, errno, bytes read, stat fields — and so must the two
// trees at the end (names, types, modes, owners, link counts, sizes, symlink targets, contents,
// user xattrs, which names are hard links of each other), before and after a remount. A second
// phase runs three such sequences at once in three processes, each on its own subtree.
//
// Only the differences listed in kAllowed (mount_diff/ops.cc) are tolerated; nothing else is
// normalised.
//
// The namespace is small on purpose (5 names in each of 4 directories, some of which are also
// the directories' own names) so that creates collide, renames replace, and rmdir finds
// non-empty directories. Open files live in a table of slots, mirrored on both sides.
//
// This file is the fixture and its tests; the parts are in tests/mount_diff/: ops.h (the allowed
// differences, the seeded Rng, results as text, the ops), generate.h (the sides and the ops'
// generation), apply.h (an op on one side), trees.h (the trees compared) and lockstep.h (a run:
// the ops on both sides, compared one by one).
//
// Seed: ARCHIL_TEST_SEED, else the clock; printed as `seed=N (replay: ARCHIL_TEST_SEED=N)` at the
// start and in every failure. The first mismatch stops the test, with the op's index, the op,
// both results and the ops before it.
//
// Skipped (not failed) without root or /dev/fuse, unless ARCHIL_REQUIRE_FUSE=1 (CI sets it).
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>

#include "metrics_scrape.h"
#include "mount_diff/lockstep.h"
#include "mount_diff/ops.h"
#include "mount_diff/trees.h"
#include "mount_harness.h"

namespace archil::testing {
namespace {

using mount_diff::AllowedUses;
using mount_diff::CompareTrees;
using mount_diff::Err;
using mount_diff::Lockstep;
using mount_diff::Prepare;
using mount_diff::ResetAllowedUses;
using mount_diff::SeedFromEnvOrClock;
using mount_diff::SeedText;

int LeftMs(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

class MountDiffTest : public MountTest {
 protected:
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    local_ = "/var/tmp/archil-diff-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(local_);
    fs::create_directories(local_);
    chmod(local_.c_str(), 0755);  // other users walk to the local tree too
    struct statfs sf {};
    statfs(local_.c_str(), &sf);
    if (sf.f_type != EXT4_SUPER_MAGIC) {
      std::printf("NOTE: %s is not on ext4 (f_type 0x%lx): the reference is that file system\n",
                  local_.c_str(), static_cast<unsigned long>(sf.f_type));
    }
    old_umask_ = umask(022);
  }
  void TearDown() override {
    if (!local_.empty()) {
      umask(old_umask_);
      fs::remove_all(local_);
    }
    MountTest::TearDown();
  }

  void Remount(const std::string& disk) {
    Ran u = Archil({"unmount", mnt_});
    ASSERT_EQ(u.exit_code, 0) << u.err;
    Ran m = Mount(disk);
    ASSERT_EQ(m.exit_code, 0) << m.err;
  }

  // Phase 1: `ops` ops on t/w/r; trees compared, remount, compared. Phase 2: three processes, each
  // `concurrent_ops` ops on its own t/pN; trees compared, remount, compared.
  void RunDiff(uint64_t seed, int ops, int concurrent_ops) {
    ResetAllowedUses();
    std::printf("%s\n", SeedText(seed).c_str());
    SCOPED_TRACE(SeedText(seed));  // in every failure, including the harness's
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    StartServer();
    ASSERT_FALSE(HasFatalFailure());
    CreateDisk("diff");
    Ran m = Mount("diff");
    ASSERT_EQ(m.exit_code, 0) << m.err;
    const std::string ta = mnt_ + "/t", tb = local_ + "/t";
    ASSERT_EQ(mkdir(ta.c_str(), 0755), 0) << Err(errno);
    ASSERT_EQ(mkdir(tb.c_str(), 0755), 0) << Err(errno);
    Prepare(ta + "/w");
    Prepare(tb + "/w");
    ASSERT_FALSE(HasFailure());
    const std::string seed_text = SeedText(seed);
    std::set<uint64_t> touched;
    double local_creates = 0, local_writes = 0, local_setattrs = 0, local_removes = 0;
    auto trees = [&](const std::string& when) {
      std::printf("comparing trees %s\n", when.c_str());
      std::optional<std::string> d = CompareTrees(ta, tb, touched);
      ASSERT_FALSE(d) << seed_text << ": trees differ " << when << ": " << *d;
    };
    {
      // In three parts, each ending with the trees compared before and after a remount: what
      // the kernel's caches showed must be what the server kept.
      Lockstep run(seed, seed, "phase 1 (t/w/r)", ta + "/w", tb + "/w");
      for (int part = 0, done = 0; part < 3; ++part) {
        const int n = part < 2 ? ops / 3 : ops - done;
        std::optional<std::string> diff = run.Run(n);
        ASSERT_FALSE(diff) << *diff;
        done += n;
        diff = run.CloseAll();
        ASSERT_FALSE(diff) << *diff;
        run.ReconcileTrees();
        touched = run.touched();
        const std::string when = "after op " + std::to_string(done - 1) + " of phase 1";
        trees(when);
        ASSERT_FALSE(HasFatalFailure());
        // Each daemon counts from 0: read before the remount.
        const std::string metrics = Archil({"metrics", mnt_}).out;
        local_creates += MetricValue(metrics, "archil_mount_local_creates_total");
        local_writes += MetricValue(metrics, "archil_mount_local_writes_total");
        local_setattrs += MetricValue(metrics, "archil_mount_local_setattrs_total");
        local_removes += MetricValue(metrics, "archil_mount_local_removes_total");
        Remount("diff");
        ASSERT_FALSE(HasFatalFailure());
        trees(when + " and a remount");
        ASSERT_FALSE(HasFatalFailure());
      }
      std::printf("phase 1: %d ops, at %.1f s: %s\n", ops, elapsed(), run.Counts().c_str());
      std::printf(
          "phase 1: answered by the mount: %.0f creates, %.0f writes, %.0f setattrs, %.0f "
          "unlinks\n",
          local_creates, local_writes, local_setattrs, local_removes);
      // The answers the mount gives itself are what the comparison tests (ADR 0025, 0028, 0029).
      EXPECT_GT(local_creates, 0);
      EXPECT_GT(local_setattrs, 0);
      EXPECT_GT(local_removes, 0);
    }

    // Phase 2: three processes at once, each on its own subtree with its own seed.
    constexpr int kProcs = 3;
    for (int p = 0; p < kProcs; ++p) {
      Prepare(ta + "/p" + std::to_string(p));
      Prepare(tb + "/p" + std::to_string(p));
    }
    ASSERT_FALSE(HasFailure());
    std::fflush(stdout);
    pid_t pids[kProcs];
    int pipes[kProcs];
    for (int p = 0; p < kProcs; ++p) {
      int fds[2];
      ASSERT_EQ(pipe(fds), 0);
      const uint64_t child_seed = seed * 1000 + 1 + uint64_t(p);
      pids[p] = fork();
      if (pids[p] == 0) {
        close(fds[0]);
        std::string sub = "p" + std::to_string(p);
        Lockstep run(seed, child_seed,
                     "phase 2, process " + std::to_string(p) + " of " + std::to_string(kProcs) +
                         " (t/" + sub + "/r, its own seed " + std::to_string(child_seed) + ")",
                     ta + "/" + sub, tb + "/" + sub);
        std::optional<std::string> d = run.Run(concurrent_ops);
        if (!d) d = run.CloseAll();
        if (!d) run.ReconcileTrees();
        std::string msg = d ? d->substr(0, 30000) : "";
        (void)!write(fds[1], msg.data(), msg.size());
        _exit(d ? 1 : 0);
      }
      close(fds[1]);
      pipes[p] = fds[0];
    }
    std::string failures;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(150);
    for (int p = 0; p < kProcs; ++p) {
      std::string msg;
      char buf[4096];
      pollfd pf{pipes[p], POLLIN, 0};
      // Bounded: a process stuck on the mount is killed rather than holding the suite.
      bool eof = false;
      while (!eof && poll(&pf, 1, LeftMs(deadline)) > 0) {
        ssize_t n = read(pipes[p], buf, sizeof(buf));
        if (n <= 0) eof = true;
        if (n > 0) msg.append(buf, size_t(n));
      }
      close(pipes[p]);
      int status = 0;
      if (eof) {
        waitpid(pids[p], &status, 0);
      } else {
        kill(pids[p], SIGKILL);
        waitpid(pids[p], &status, 0);
        msg += " (process " + std::to_string(p) + " timed out)";
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !msg.empty()) {
        failures += "\n" + (msg.empty() ? "process " + std::to_string(p) + " died" : msg);
      }
    }
    ASSERT_TRUE(failures.empty()) << seed_text << ": phase 2:" << failures;
    std::printf("phase 2: %d processes x %d ops, at %.1f s\n", kProcs, concurrent_ops, elapsed());
    trees("after phase 2");
    ASSERT_FALSE(HasFatalFailure());
    Remount("diff");
    ASSERT_FALSE(HasFatalFailure());
    trees("after phase 2 and a remount");
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
    std::printf("done in %.1f s; allowed differences used: %s\n", elapsed(), AllowedUses().c_str());
  }

  std::string local_;
  mode_t old_umask_ = 022;
};

TEST_F(MountDiffTest, RandomSeed) { RunDiff(SeedFromEnvOrClock(), 1500, 300); }

TEST_F(MountDiffTest, FixedSeed) { RunDiff(42, 1000, 200); }

}  // namespace
}  // namespace archil::testing
