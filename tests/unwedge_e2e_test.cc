// A dead, stopped or slow server, or a stopped daemon, never wedges the machine (docs/semantics.md
// §5.12, docs/cli.md "archil unmount"): `archil unmount -f` returns at once, `df` answers, a
// killed process dies, a daemon ends with the process that owns it, and a restarted server is
// invisible to applications.
//
// Each test bounds every wait; a process that must die is checked with waitpid, never assumed.
#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>

#include "base/test_seed.h"
#include "mount_harness.h"

namespace archil::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using FractionalMs = std::chrono::duration<double, std::milli>;

// `archil unmount -f` returns within a second; a sanitizer build's binaries take longer to start.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr auto kForcedUnmountBound = std::chrono::seconds(3);
#else
constexpr auto kForcedUnmountBound = std::chrono::seconds(1);
#endif

// Prints "unwedge: ROW: N ms", the line bench/unwedge.sh collects over repeated runs.
void Report(const char* row, FractionalMs took) {
  std::printf("unwedge: %s: %.1f ms\n", row, took.count());
  std::fflush(stdout);
}

Clock::duration Since(Clock::time_point start) { return Clock::now() - start; }

// A child process that runs `fn` (its exit code: 0, or the errno it met).
template <typename Fn>
pid_t Spawn(Fn fn) {
  const pid_t pid = fork();
  if (pid == 0) _exit(fn());
  return pid;
}

// Whether child `pid` is still running after `ms`.
bool StillRunningAfter(pid_t pid, int ms) {
  std::this_thread::sleep_for(milliseconds(ms));
  int status = 0;
  return waitpid(pid, &status, WNOHANG) == 0;
}

// SIGKILLs child `pid` and returns how long it took to die, or -1 ms if it did not within 5 s
// (then it is left to the teardown's unmount -f, which ends what it waits on).
FractionalMs KillAndTimeDeath(pid_t pid) {
  const auto start = Clock::now();
  kill(pid, SIGKILL);
  while (Clock::now() - start < std::chrono::seconds(5)) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return Clock::now() - start;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return FractionalMs(-1);
}

// Kills them all at once, as a shell kills a job, and returns how long each took to die after
// the kill (-1: not within 5 s).
std::vector<FractionalMs> KillAllAndTimeDeaths(const std::vector<pid_t>& pids) {
  const auto start = Clock::now();
  for (pid_t p : pids) kill(p, SIGKILL);
  std::vector<FractionalMs> died(pids.size(), FractionalMs(-1));
  size_t left = pids.size();
  while (left > 0 && Clock::now() - start < std::chrono::seconds(5)) {
    for (size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      if (died[i].count() < 0 && waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        died[i] = Clock::now() - start;
        --left;
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return died;
}

// The pids of archil-mount processes serving `mnt` (their command lines name it).
std::vector<pid_t> DaemonsOf(const std::string& mnt) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find("archil-mount") != std::string::npos && cmd.find(mnt) != std::string::npos) {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

class UnwedgeTest : public MountTest {
 protected:
  // statvfs of `path` in a child process; how long it took, or -1 ms past `limit_ms` (the child
  // is then killed).
  milliseconds TimeStatfs(const std::string& path, int limit_ms) {
    const auto start = Clock::now();
    const pid_t pid = Spawn([&] {
      struct statvfs v {};
      return statvfs(path.c_str(), &v) == 0 ? 0 : errno;
    });
    int status = 0;
    if (!WaitChild(pid, limit_ms, &status)) return milliseconds(-1);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "statvfs " << path;
    return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  }

  // A server, disk `name` mounted at mnt_, and its daemon's pid.
  pid_t ServeAndMount(const std::string& name, const std::vector<std::string>& mount_flags = {}) {
    StartServer();
    CreateDisk(name);
    EXPECT_EQ(Mount(name, mount_flags).exit_code, 0);
    const pid_t daemon = DaemonPid(mnt_);
    EXPECT_GT(daemon, 0);
    return daemon;
  }
};

TEST_F(UnwedgeTest, UnmountRefusesWhatIsNotAnArchilMount) {
  for (const char* flag : {"", "-f"}) {
    std::vector<std::string> args = {"unmount"};
    if (*flag) args.emplace_back(flag);
    args.push_back(mnt_);  // a directory, not a mount point
    Ran none = Archil(args, {}, 10000);
    EXPECT_EQ(none.exit_code, 4) << none.err;  // not found
    EXPECT_NE(none.err.find("is not a mount point"), std::string::npos) << none.err;
    args.back() = "/";  // mounted, but not by archil: never detached
    Ran other = Archil(args, {}, 10000);
    EXPECT_EQ(other.exit_code, 2) << other.err;  // invalid argument
    EXPECT_NE(other.err.find("is not an archil mount"), std::string::npos) << other.err;
  }
  EXPECT_TRUE(FindMount("/").has_value());
}

TEST_F(UnwedgeTest, ForcedUnmountOfAStoppedDaemonTakesUnderASecond) {
  ASSERT_GT(ServeAndMount("stopped"), 0);
  // The floor: the same command on a healthy mount.
  const auto healthy = Clock::now();
  Ran plain = Archil({"unmount", mnt_}, {}, 10000);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  Report("floor: archil unmount, daemon healthy", Since(healthy));
  ASSERT_EQ(Mount("stopped").exit_code, 0);
  const pid_t daemon = DaemonPid(mnt_);
  ASSERT_GT(daemon, 0);
  ASSERT_EQ(kill(daemon, SIGSTOP), 0);
  // A process blocks on the stopped daemon (a name the kernel has never looked up).
  const pid_t blocked = Spawn([&] {
    struct stat st {};
    return stat((mnt_ + "/never-seen").c_str(), &st) == 0 ? 0 : errno;
  });
  EXPECT_TRUE(StillRunningAfter(blocked, 300)) << "the stat did not wait for the daemon";

  const auto start = Clock::now();
  Ran forced = Archil({"unmount", "-f", mnt_}, {}, 10000);
  const auto took = Clock::now() - start;
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_LT(took, kForcedUnmountBound);
  Report("archil unmount -f, daemon stopped", took);
  EXPECT_FALSE(FindMountedHere());
  // The blocked process got its error (ENOTCONN) and ended.
  int status = 0;
  EXPECT_TRUE(WaitChild(blocked, 2000, &status)) << "the blocked stat did not end";
  // The stopped daemon was killed: nothing of the mount is left.
  EXPECT_FALSE(ProcessAlive(daemon));
  // And df of the machine is unaffected.
  EXPECT_GE(TimeStatfs(dir_.string(), 2000).count(), 0);
}

TEST_F(UnwedgeTest, APlainUnmountOfAStoppedDaemonFailsAfterItsBoundAndSaysWhy) {
  const pid_t daemon = ServeAndMount("plain");
  ASSERT_GT(daemon, 0);
  // Dirty pages the kernel must hand to the daemon before the unmount can finish.
  std::ofstream(mnt_ + "/dirty") << std::string(1 << 20, 'd');
  ASSERT_EQ(kill(daemon, SIGSTOP), 0);
  // The kernel may detach the mount at once (it writes the pages back asynchronously) or wait
  // for the stopped daemon: either way the command returns within its bound, and says what to do.
  const auto start = Clock::now();
  Ran plain = Archil({"unmount", mnt_}, {}, 30000);
  const auto took = Clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(15));
  if (plain.exit_code == 0) {
    EXPECT_FALSE(FindMountedHere());
  } else {
    EXPECT_EQ(plain.exit_code, 6) << plain.err;  // unavailable
    EXPECT_NE(plain.err.find("archil unmount -f"), std::string::npos) << plain.err;
  }
  kill(daemon, SIGCONT);  // it ends now, and an unmount that waited completes
  for (int i = 0; i < 1000 && (FindMountedHere() || ProcessAlive(daemon)); ++i) usleep(10000);
  EXPECT_FALSE(FindMountedHere());
  EXPECT_FALSE(ProcessAlive(daemon));
}

TEST_F(UnwedgeTest, AStoppedServerLeavesDfAnsweringAndAKilledReaderDies) {
  ASSERT_GT(ServeAndMount("slow"), 0);
  const milliseconds healthy = TimeStatfs(mnt_, 10000);
  ASSERT_GE(healthy.count(), 0);
  Report("floor: df, server healthy", healthy);
  ASSERT_EQ(kill(server_, SIGSTOP), 0);
  // statfs answers from the last figures after its 5-s budget.
  const milliseconds df = TimeStatfs(mnt_, 10000);
  EXPECT_GE(df.count(), 0) << "df of the mount hung";
  EXPECT_LT(df.count(), 6000);
  Report("df, server stopped", df);
  // A reader waits for the server, and dies when killed.
  const pid_t reader = Spawn([&] {
    struct stat st {};
    return stat((mnt_ + "/not-cached").c_str(), &st) == 0 ? 0 : errno;
  });
  EXPECT_TRUE(StillRunningAfter(reader, 500));
  const FractionalMs died = KillAndTimeDeath(reader);
  EXPECT_GE(died.count(), 0) << "the killed reader did not die";
  EXPECT_LT(died.count(), 2000);
  Report("kill -9 to death, reader waiting on a stopped server", died);
  // The floor: a process that waits on nothing.
  const pid_t idle = Spawn([] {
    pause();
    return 0;
  });
  ASSERT_TRUE(StillRunningAfter(idle, 50));
  Report("floor: kill -9 to death, idle process", KillAndTimeDeath(idle));
  kill(server_, SIGCONT);
}

TEST_F(UnwedgeTest, AServerGoneForGoodLeavesProcessesKillableAndStatusSaysSo) {
  ASSERT_GT(ServeAndMount("gone"), 0);
  {
    int fd = open((mnt_ + "/kept").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "kept", 4), 4);
    ASSERT_EQ(fsync(fd), 0);
    close(fd);
  }
  KillServer();
  // A hard mount: requests wait for the server rather than fail.
  std::vector<pid_t> waiting = {
      Spawn([&] {
        struct stat st {};
        return stat((mnt_ + "/not-cached").c_str(), &st) == 0 ? 0 : errno;
      }),
      Spawn([&] {
        const int fd = open((mnt_ + "/new").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        return fd >= 0 ? 0 : errno;
      }),
      Spawn([&] { return mkdir((mnt_ + "/dir").c_str(), 0755) == 0 ? 0 : errno; }),
  };
  for (pid_t p : waiting) EXPECT_TRUE(StillRunningAfter(p, 300)) << "a request failed at once";
  // `archil status` says the server is unreachable, and how many requests wait for it.
  json st;
  for (int i = 0; i < 100; ++i) {
    st = json::parse(Archil({"--json", "status", mnt_}).out, nullptr, false);
    if (st.is_object() && st.value("unreachable_since_unix_ms", int64_t{0}) > 0) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(st.is_object());
  EXPECT_GT(st.value("unreachable_since_unix_ms", int64_t{0}), 0) << st.dump();
  EXPECT_NE(st.value("state", "").find("server unreachable since"), std::string::npos) << st.dump();
  // The journal says it once.
  int said = 0;
  for (const std::string& line : JournalLines()) {
    if (line.find("is unreachable") != std::string::npos) ++said;
  }
  EXPECT_EQ(said, 1);
  // Killed together: the open(O_CREAT) and the mkdir may wait for the root's lock that the
  // other's request holds (the kernel takes it before the LOOKUP it sends), and a process waiting
  // for a lock dies once the holder's request ends, which its own kill does (docs/semantics.md
  // §2).
  for (const FractionalMs& died : KillAllAndTimeDeaths(waiting)) {
    EXPECT_GE(died.count(), 0) << "a killed process did not die";
    EXPECT_LT(died.count(), 2000);
  }
  const auto start = Clock::now();
  Ran forced = Archil({"unmount", "-f", mnt_}, {}, 10000);
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_LT(Clock::now() - start, kForcedUnmountBound);
  EXPECT_FALSE(FindMountedHere());
}

TEST_F(UnwedgeTest, ASoftMountFailsRequestsAfterItsTimeout) {
  ASSERT_GT(ServeAndMount("soft", {"--timeout", "2"}), 0);
  KillServer();
  const auto start = Clock::now();
  const pid_t p = Spawn([&] {
    struct stat st {};
    return stat((mnt_ + "/not-cached").c_str(), &st) == 0 ? 0 : errno;
  });
  int status = 0;
  ASSERT_TRUE(WaitChild(p, 15000, &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == EIO) << status;
  const auto took = Clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(1900));
  EXPECT_LT(took, std::chrono::seconds(10));
  Report("EIO from a --timeout 2 mount, server gone", took);
}

// The owner (a child process here) dies: the daemon aborts its mount and exits, whether the
// mount was ready or still being made.
TEST_F(UnwedgeTest, ADaemonEndsWithItsOwner) {
  StartServer();
  CreateDisk("owned");
  for (const bool ready : {true, false}) {
    SCOPED_TRACE(ready ? "owner killed after the ready line" : "owner killed before it");
    const pid_t owner = Spawn([] {
      pause();
      return 0;
    });
    if (!ready) kill(server_, SIGSTOP);  // the mount waits for the server: no ready line yet
    const std::map<std::string, std::string> env = {{"ARCHIL_OWNER_PID", std::to_string(owner)}};
    std::vector<std::string> argv = {kBin + "/archil", "mount", "-q", "owned", mnt_};
    auto envv = env_;
    for (auto& [k, v] : env) envv[k] = v;
    std::thread mounting([&] { RunCommand(argv, envv, 20000); });
    std::vector<pid_t> daemons;
    for (int i = 0; i < 500; ++i) {
      daemons = DaemonsOf(mnt_);
      if (!daemons.empty() && (!ready || FindMountedHere())) break;
      std::this_thread::sleep_for(milliseconds(10));
    }
    ASSERT_FALSE(daemons.empty());
    if (ready) {
      ASSERT_TRUE(FindMountedHere());
    }
    const auto start = Clock::now();
    int status = 0;
    kill(owner, SIGKILL);
    waitpid(owner, &status, 0);
    while (!DaemonsOf(mnt_).empty() && Clock::now() - start < std::chrono::seconds(5)) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    EXPECT_TRUE(DaemonsOf(mnt_).empty()) << "the daemon outlived its owner";
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
    Report(
        ready ? "owner's death to daemon exit, mounted" : "owner's death to daemon exit, mounting",
        Since(start));
    EXPECT_FALSE(FindMountedHere());
    if (!ready) kill(server_, SIGCONT);
    mounting.join();
  }
}

// kill -9 of the server and a restart after 0-500 ms (`ARCHIL_RESTART_ROUNDS` rounds, 30 by
// default), under writers that create, rename and fsync: no writer sees an error, and every
// fsynced file is there, whole, after a remount.
TEST_F(UnwedgeTest, ServerRestartsAreInvisibleToWriters) {
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  int rounds = 30;
  if (const char* r = std::getenv("ARCHIL_RESTART_ROUNDS"); r && *r) rounds = std::atoi(r);
  const std::vector<std::string> listen = {"--mount-listen",
                                           "127.0.0.1:" + std::to_string(FreePort())};
  StartServer(listen);
  CreateDisk("restarts");
  ASSERT_EQ(Mount("restarts").exit_code, 0);
  const std::string acked = (dir_ / "acked").string();
  const std::string stop = (dir_ / "stop").string();
  // In a child process, so that this one holds nothing open on the mount while it restarts the
  // server. Each record: write tmp, fsync, rename over its final name, fsync the directory.
  const pid_t writers = Spawn([&] {
    const int log = open(acked.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        const std::string dir = mnt_ + "/w" + std::to_string(t);
        if (mkdir(dir.c_str(), 0755) != 0) return (void)failures.fetch_add(1);
        const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (int i = 0; access(stop.c_str(), F_OK) != 0 && i < 1000000; ++i) {
          const std::string tmp = dir + "/tmp";
          const std::string name = dir + "/r" + std::to_string(i);
          const std::string body = std::to_string(t) + ":" + std::to_string(i) + ":" +
                                   std::string(1000 + i % 3000, static_cast<char>('a' + i % 26));
          const int fd = open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
          bool ok =
              fd >= 0 && write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size());
          ok = ok && fsync(fd) == 0;
          if (fd >= 0) ok = close(fd) == 0 && ok;
          ok = ok && rename(tmp.c_str(), name.c_str()) == 0 && fsync(dfd) == 0;
          if (!ok) {
            std::fprintf(stderr, "writer %d record %d: %s\n", t, i, std::strerror(errno));
            failures.fetch_add(1);
            return;
          }
          const std::string line = std::to_string(t) + " " + std::to_string(i) + " " +
                                   std::to_string(body.size()) + "\n";
          (void)!write(log, line.data(), line.size());
        }
      });
    }
    for (auto& th : threads) th.join();
    return failures.load() == 0 ? 0 : 1;
  });
  auto acked_lines = [&] {
    std::string s = Slurp(acked);
    return std::count(s.begin(), s.end(), '\n');
  };
  std::uniform_int_distribution<int> gap_ms(0, 500);
  for (int round = 0; round < rounds; ++round) {
    const long before = acked_lines();
    for (int i = 0; i < 3000 && acked_lines() < before + 3; ++i) usleep(10000);
    ASSERT_GE(acked_lines(), before + 3) << "writers made no progress in round " << round;
    int status = 0;
    ASSERT_EQ(waitpid(writers, &status, WNOHANG), 0) << "a writer failed in round " << round;
    KillServer();
    std::this_thread::sleep_for(milliseconds(gap_ms(rng)));
    StartServer(listen);
  }
  std::ofstream(stop) << "";
  int status = 0;
  ASSERT_TRUE(WaitChild(writers, 60000, &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer saw an error";
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("restarts").exit_code, 0);
  std::istringstream lines(Slurp(acked));
  int t = 0, i = 0;
  size_t size = 0;
  long checked = 0;
  while (lines >> t >> i >> size) {
    const std::string got = Slurp(mnt_ + "/w" + std::to_string(t) + "/r" + std::to_string(i));
    const std::string want = std::to_string(t) + ":" + std::to_string(i) + ":";
    ASSERT_EQ(got.size(), size) << "record " << t << ":" << i;
    ASSERT_EQ(got.substr(0, want.size()), want) << "record " << t << ":" << i;
    ++checked;
  }
  EXPECT_GT(checked, rounds * 3);
  std::printf("%d restarts, %ld fsynced records checked\n", rounds, checked);
}

}  // namespace
}  // namespace archil::testing
