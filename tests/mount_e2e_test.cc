// `archil mount` end to end, as root on a real FUSE mount over a real `archil server`: files by
// every local user's own permissions, failures that say why, busy and forced unmounts, a daemon
// killed with kill -9, the server killed under fsyncing writers, mount.archil, the journal line,
// and mount/unmount cycles that leak nothing.
//
// Skipped (not failed) without root or /dev/fuse, unless ARCHIL_REQUIRE_FUSE=1 (CI sets it).
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "metrics_scrape.h"
#include "mount_harness.h"
#include "net/socket.h"

namespace archil::testing {
namespace {

TEST_F(MountTest, MountedDiskKeepsFilesAcrossRemounts) {
  StartServer();
  std::string id = CreateDisk("files");
  Ran m = Mount("files");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(m.out, "");  // -q
  {
    std::ofstream(mnt_ + "/hello.txt") << "hello, disk\n";
    fs::create_directories(mnt_ + "/a/b/c");
    std::ofstream(mnt_ + "/a/b/c/deep") << std::string(3 << 20, 'x');
    fs::create_symlink("hello.txt", mnt_ + "/link");
  }
  EXPECT_EQ(Slurp(mnt_ + "/hello.txt"), "hello, disk\n");
  Ran st = Archil({"--json", "status", mnt_});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  json s = json::parse(st.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << st.out;
  EXPECT_EQ(s.value("disk_id", ""), id);
  EXPECT_EQ(s.value("state", ""), "connected");
  EXPECT_TRUE(ProcessAlive(s.value("pid", 0)));

  // The journal line Archil's published latency script reads, under archil-<disk id>.
  bool mounted_line = false;
  for (const std::string& l : JournalLines()) {
    if (l.find("SYSLOG_IDENTIFIER=archil-" + id + "\n") != std::string::npos &&
        l.find("MESSAGE=Mounted disk in ") != std::string::npos) {
      mounted_line = true;
    }
  }
  EXPECT_TRUE(mounted_line);
  EXPECT_EQ(ReadAheadKb(), "1024");  // the default, set after INIT (which would cap it at 128)

  Ran u = Archil({"unmount", mnt_});
  ASSERT_EQ(u.exit_code, 0) << u.err;
  EXPECT_FALSE(fs::exists(mnt_ + "/hello.txt"));
  EXPECT_FALSE(ProcessAlive(s.value("pid", 0)));                // unmount waits for the daemon
  ASSERT_EQ(Mount(id, {"--read-ahead", "4096"}).exit_code, 0);  // by id this time
  EXPECT_EQ(ReadAheadKb(), "4096");
  EXPECT_EQ(Slurp(mnt_ + "/hello.txt"), "hello, disk\n");
  EXPECT_EQ(Slurp(mnt_ + "/a/b/c/deep"), std::string(3 << 20, 'x'));
  EXPECT_EQ(fs::read_symlink(mnt_ + "/link"), "hello.txt");
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

// A listing gives the kernel every name with its attributes (READDIRPLUS), so `ls -l` or `find`
// over a directory the kernel has not seen costs a few requests, not a LOOKUP per name.
TEST_F(MountTest, AListingCarriesEveryNamesAttributes) {
  StartServer();
  CreateDisk("listing");
  ASSERT_EQ(Mount("listing").exit_code, 0);
  constexpr int kFiles = 300;
  fs::create_directories(mnt_ + "/d");
  for (int i = 0; i < kFiles; ++i) {
    std::ofstream(mnt_ + "/d/f" + std::to_string(i)) << i;
  }
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("listing").exit_code, 0);  // the kernel's caches start empty
  // The daemon rewrites its record every second: counts are read once a new one is out.
  auto requests_after = [&](int64_t newer_than) -> std::pair<uint64_t, int64_t> {
    for (int i = 0; i < 50; ++i) {
      json j = json::parse(Archil({"--json", "status", mnt_}).out, nullptr, false);
      if (j.is_object() && j.value("updated_unix_ms", int64_t{0}) > newer_than) {
        return {j.value("requests", uint64_t{0}), j.value("updated_unix_ms", int64_t{0})};
      }
      usleep(100'000);
    }
    return {0, 0};
  };
  auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  auto [before, at] = requests_after(now_ms());
  ASSERT_NE(at, 0);
  int seen = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(mnt_ + "/d")) {
    struct stat st {};
    ASSERT_EQ(lstat(e.path().c_str(), &st), 0) << e.path();
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_GT(st.st_size, 0);
    ++seen;
  }
  EXPECT_EQ(seen, kFiles);
  const int64_t listed = now_ms();
  auto [after, at2] = requests_after(listed);
  ASSERT_NE(at2, 0);
  // The directory's LOOKUP, OPENDIR, a READDIRPLUS per few dozen names, RELEASEDIR, and what the
  // status commands cost: far fewer than one request per name.
  EXPECT_LT(after - before, uint64_t{kFiles / 4}) << after - before << " requests";
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

TEST_F(MountTest, EveryLocalUserByTheirOwnPermissions) {
  StartServer();
  CreateDisk("perm");
  ASSERT_EQ(Mount("perm").exit_code, 0);
  const std::string home = mnt_ + "/home1000";
  ASSERT_EQ(mkdir(home.c_str(), 0755), 0);
  ASSERT_EQ(chown(home.c_str(), 1000, 1000), 0);
  const std::string tmp = mnt_ + "/tmp";
  ASSERT_EQ(mkdir(tmp.c_str(), 0777), 0);
  ASSERT_EQ(chmod(tmp.c_str(), 01777), 0);

  // New files belong to their creator, with the creator's umask.
  EXPECT_EQ(RunAs(1000, 1000,
                  [&] {
                    umask(027);
                    int fd = open((home + "/mine").c_str(), O_CREAT | O_WRONLY, 0666);
                    if (fd < 0) return errno;
                    close(fd);
                    return 0;
                  }),
            0);
  struct stat st {};
  ASSERT_EQ(stat((home + "/mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1000u);
  EXPECT_EQ(st.st_gid, 1000u);
  EXPECT_EQ(st.st_mode & 0777, 0640u);

  // Another user may not write into 1000's directory, nor read 0640 files.
  EXPECT_EQ(
      RunAs(1001, 1001,
            [&] { return ErrnoOr0(open((home + "/theirs").c_str(), O_CREAT | O_WRONLY, 0644)); }),
      EACCES);
  EXPECT_EQ(RunAs(1001, 1001, [&] { return ErrnoOr0(open((home + "/mine").c_str(), O_RDONLY)); }),
            EACCES);
  EXPECT_EQ(RunAs(1001, 1001, [&] { return ErrnoOr0(chmod((home + "/mine").c_str(), 0777)); }),
            EPERM);
  EXPECT_EQ(
      RunAs(1000, 1000, [&] { return ErrnoOr0(chown((home + "/mine").c_str(), 1001, 1001)); }),
      EPERM);

  // Sticky directory: 1001 may not remove 1000's file.
  EXPECT_EQ(RunAs(1000, 1000,
                  [&] {
                    int fd = open((tmp + "/f").c_str(), O_CREAT | O_WRONLY, 0666);
                    if (fd < 0) return errno;
                    close(fd);
                    return 0;
                  }),
            0);
  EXPECT_EQ(RunAs(1001, 1001, [&] { return ErrnoOr0(unlink((tmp + "/f").c_str())); }), EPERM);
  EXPECT_EQ(RunAs(1000, 1000, [&] { return ErrnoOr0(unlink((tmp + "/f").c_str())); }), 0);

  // A write by a non-owner clears the set-user-ID bit, as on ext4.
  const std::string suid = tmp + "/suid";
  { std::ofstream(suid) << "x"; }
  ASSERT_EQ(chmod(suid.c_str(), 04777), 0);
  EXPECT_EQ(RunAs(1001, 1001,
                  [&] {
                    int fd = open(suid.c_str(), O_WRONLY | O_APPEND);
                    if (fd < 0) return errno;
                    int rc = ErrnoOr0(static_cast<int>(write(fd, "y", 1)));
                    close(fd);
                    return rc;
                  }),
            0);
  ASSERT_EQ(stat(suid.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

// One file's xattrs cannot wedge a mount: a local user fills the names' 64 KiB (ENOSPC after
// 257 names of 254 bytes) and listing them answers at once, with no reconnection; before the
// totals were enforced, the list outgrew a reply frame and the client retried it forever.
TEST_F(MountTest, OneFilesXattrsStayWithinTheirTotals) {
  StartServer();
  CreateDisk("xattrs");
  ASSERT_EQ(Mount("xattrs").exit_code, 0);
  const std::string tmp = mnt_ + "/tmp";
  ASSERT_EQ(mkdir(tmp.c_str(), 0777), 0);
  ASSERT_EQ(chmod(tmp.c_str(), 01777), 0);
  const std::string x = tmp + "/x";
  const auto start = std::chrono::steady_clock::now();
  // As an unprivileged user, in a 1777 directory: 1,200 tries, as the attack did.
  EXPECT_EQ(RunAs(1000, 1000,
                  [&] {
                    int fd = open(x.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                    if (fd < 0) return errno;
                    close(fd);
                    const std::string pad(245, 'n');
                    for (int i = 0; i < 1200; ++i) {
                      char name[256];
                      std::snprintf(name, sizeof name, "user.%04d%s", i, pad.c_str());
                      if (setxattr(x.c_str(), name, "1", 1, 0) != 0) return errno;
                    }
                    return 0;
                  }),
            ENOSPC);
  // The whole list, 257 names (65,535 bytes with their NULs), in a child with a bound (RunAs):
  // before, this never returned.
  EXPECT_EQ(RunAs(1000, 1000,
                  [&] {
                    std::string list(70000, '\0');
                    const ssize_t n = listxattr(x.c_str(), list.data(), list.size());
                    if (n < 0) return errno;
                    if (listxattr(x.c_str(), nullptr, 0) != n) return 1;
                    return n == 257 * 255 ? 0 : 2;
                  }),
            0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  json st = json::parse(Archil({"--json", "status", mnt_}).out, nullptr, false);
  ASSERT_TRUE(st.is_object());
  EXPECT_EQ(st.value("reconnects", uint64_t{0}), 0u) << st.dump();
}

TEST_F(MountTest, FailuresSayWhy) {
  StartServer();
  std::string id = CreateDisk("why");

  Ran missing = Archil({"mount", "why", (dir_ / "nope").string()});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;

  Ran shared = Mount("why", {"--shared"});
  EXPECT_NE(shared.exit_code, 0);
  EXPECT_NE(shared.err.find("--shared"), std::string::npos) << shared.err;

  Ran unknown = Mount("nosuchdisk");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("nosuchdisk"), std::string::npos) << unknown.err;

  Ran bad = Archil({"mount", "-q", "why", mnt_}, {{"ARCHIL_MOUNT_TOKEN", "adt_not-a-real-token"}});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("token"), std::string::npos) << bad.err;

  std::string token = env_["ARCHIL_MOUNT_TOKEN"];
  env_.erase("ARCHIL_MOUNT_TOKEN");
  Ran none = Mount("why");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("ARCHIL_MOUNT_TOKEN"), std::string::npos) << none.err;
  std::string token_file = (dir_ / "token").string();
  std::ofstream(token_file) << token << "\n";
  ASSERT_EQ(Mount("why", {"--token-file", token_file}).exit_code, 0);  // a token file works
  env_["ARCHIL_MOUNT_TOKEN"] = token;

  Ran twice = Mount("why");
  EXPECT_EQ(twice.exit_code, 5) << twice.err;  // busy
  EXPECT_NE(twice.err.find("already mounted"), std::string::npos) << twice.err;
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  Ran not_mounted = Archil({"unmount", mnt_});
  EXPECT_NE(not_mounted.exit_code, 0);
  EXPECT_NE(not_mounted.err.find("not a mount point"), std::string::npos) << not_mounted.err;

  StopServer();
  Ran no_server = Mount(id);
  EXPECT_NE(no_server.exit_code, 0);
  EXPECT_NE(no_server.err.find("no archil server"), std::string::npos) << no_server.err;
  // A region whose disk server does not answer.
  std::string regions = (dir_ / "regions.json").string();
  std::ofstream(regions)
      << R"({"regions": {"dead": {"api": "http://127.0.0.1:1", "mount": "127.0.0.1:1"}}})";
  Ran down =
      Archil({"mount", "-q", id, mnt_, "--region", "dead"}, {{"ARCHIL_REGIONS_FILE", regions}});
  EXPECT_EQ(down.exit_code, 6) << down.err;
  EXPECT_NE(down.err.find("unreachable"), std::string::npos) << down.err;
  EXPECT_FALSE(FindMountedHere());
}

TEST_F(MountTest, BusyUnmountAndForce) {
  StartServer();
  CreateDisk("busy");
  ASSERT_EQ(Mount("busy").exit_code, 0);
  pid_t daemon = DaemonPid(mnt_);
  int fd = open((mnt_ + "/open").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  Ran busy = Archil({"unmount", mnt_});
  EXPECT_EQ(busy.exit_code, 5);
  EXPECT_NE(busy.err.find("busy"), std::string::npos) << busy.err;
  EXPECT_EQ(write(fd, "still works", 11), 11);
  Ran forced = Archil({"unmount", "-f", mnt_});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  close(fd);
  for (int i = 0; i < 200 && ProcessAlive(daemon); ++i) usleep(10000);
  EXPECT_FALSE(ProcessAlive(daemon));
  ASSERT_EQ(Mount("busy").exit_code, 0);  // and it mounts again at once
  EXPECT_EQ(Slurp(mnt_ + "/open"), "still works");
}

TEST_F(MountTest, KilledDaemonDoesNotWedgeTheMountPoint) {
  StartServer();
  CreateDisk("killed");
  ASSERT_EQ(Mount("killed").exit_code, 0);
  {
    int fd = open((mnt_ + "/synced").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "durable", 7), 7);
    ASSERT_EQ(fsync(fd), 0);
    close(fd);
  }
  // Written and closed but not fsynced: the close's flush (or else the daemon's sync timer, every
  // 2 s) sends it. The test waits for the event, the bytes answered by the server, not for a
  // guessed time: on a loaded machine either can come late.
  auto written = [&] {
    Ran m = Archil({"metrics", mnt_});
    return m.exit_code == 0 ? MetricValue(m.out, "archil_client_written_bytes_total") : -1.0;
  };
  const double written_before = written();
  ASSERT_GE(written_before, 7) << "the synced file's bytes are not counted";
  const auto closed = std::chrono::steady_clock::now();
  std::ofstream(mnt_ + "/unsynced") << "soon durable";
  while (written() < written_before + 12 &&
         std::chrono::steady_clock::now() - closed < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(written(), written_before + 12) << "the timer did not send the closed file in 60 s";
  std::printf(
      "a closed, unsynced file reached the server after %.0f ms\n",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - closed).count());
  pid_t daemon = DaemonPid(mnt_);
  ASSERT_GT(daemon, 0);
  ASSERT_EQ(kill(daemon, SIGKILL), 0);
  for (int i = 0; i < 200 && ProcessAlive(daemon); ++i) usleep(5000);
  auto start = std::chrono::steady_clock::now();
  Ran again = Mount("killed");
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_LT(took, std::chrono::seconds(1));
  EXPECT_EQ(Slurp(mnt_ + "/synced"), "durable");
  EXPECT_EQ(Slurp(mnt_ + "/unsynced"), "soon durable");

  // And `archil unmount` clears a killed daemon's mount too.
  daemon = DaemonPid(mnt_);
  ASSERT_EQ(kill(daemon, SIGKILL), 0);
  for (int i = 0; i < 200 && ProcessAlive(daemon); ++i) usleep(5000);
  start = std::chrono::steady_clock::now();
  Ran u = Archil({"unmount", mnt_});
  EXPECT_EQ(u.exit_code, 0) << u.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_FALSE(FindMountedHere());
}

TEST_F(MountTest, ServerKilledUnderFsyncingWritersLosesNothing) {
  const std::vector<std::string> listen = {"--mount-listen",
                                           "127.0.0.1:" + std::to_string(FreePort())};
  StartServer(listen);
  CreateDisk("crash");
  ASSERT_EQ(Mount("crash").exit_code, 0);
  // The writers run in a child process: this process restarts the server, and must hold no file
  // open on the mount while it does (a spawned child's exec closes inherited descriptors, each
  // close a FUSE FLUSH).
  const std::string log = (dir_ / "acked").string();
  const std::string stop = (dir_ / "stop").string();
  pid_t writers = fork();
  if (writers == 0) {
    int acked = open(log.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        std::string path = mnt_ + "/w" + std::to_string(t);
        int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) return (void)failures.fetch_add(1);
        for (int i = 0; access(stop.c_str(), F_OK) != 0 && i < 100000; ++i) {
          char rec[4096];
          std::memset(rec, 'a' + (i % 26), sizeof(rec));
          std::snprintf(rec, sizeof(rec), "%d:%d:", t, i);
          if (pwrite(fd, rec, sizeof(rec), off_t{i} * 4096) != 4096 || fsync(fd) != 0) {
            failures.fetch_add(1);
            break;
          }
          std::string line = std::to_string(t) + " " + std::to_string(i) + "\n";
          (void)!write(acked, line.data(), line.size());
        }
        close(fd);
      });
    }
    for (auto& th : threads) th.join();
    _exit(failures.load() == 0 ? 0 : 1);
  }
  auto acked_lines = [&] {
    std::string s = Slurp(log);
    return std::count(s.begin(), s.end(), '\n');
  };
  for (int round = 0; round < 2; ++round) {
    long before = acked_lines();
    for (int i = 0; i < 500 && acked_lines() < before + 20; ++i) usleep(10000);
    ASSERT_GE(acked_lines(), before + 20) << "writers made no progress";
    KillServer();
    StartServer(listen);
  }
  long before = acked_lines();
  for (int i = 0; i < 500 && acked_lines() < before + 20; ++i) usleep(10000);
  std::ofstream(stop) << "";
  int status = 0;
  waitpid(writers, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer saw an error";
  // Every acknowledged (fsynced) record is on the disk, after a remount.
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("crash").exit_code, 0);
  std::istringstream lines(Slurp(log));
  int t = 0, i = 0;
  long checked = 0;
  std::string files[2] = {Slurp(mnt_ + "/w0"), Slurp(mnt_ + "/w1")};
  while (lines >> t >> i) {
    std::string want = std::to_string(t) + ":" + std::to_string(i) + ":";
    ASSERT_GE(files[t].size(), size_t(i + 1) * 4096) << "record " << t << ":" << i << " lost";
    ASSERT_EQ(files[t].substr(size_t(i) * 4096, want.size()), want) << "record " << t << ":" << i;
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

TEST_F(MountTest, OneMountPerDiskAndForceFencesTheOldOne) {
  StartServer();
  CreateDisk("excl");
  const std::string other = mnt_ + "2";
  fs::create_directories(other);
  ASSERT_EQ(Mount("excl").exit_code, 0);
  std::ofstream(mnt_ + "/first") << "from the first mount";
  SyncMount();  // what a takeover keeps of the old holder: what it synced
  Ran refused = Archil({"mount", "-q", "excl", other});
  EXPECT_EQ(refused.exit_code, 5) << refused.err;
  EXPECT_NE(refused.err.find(mnt_), std::string::npos) << "names the holder: " << refused.err;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;

  // The old mount holds an open file; --force takes the disk over and fences it.
  int fd = open((mnt_ + "/first").c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Ran forced = Archil({"mount", "-q", "excl", other, "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  std::ofstream(other + "/second") << "from the new holder";
  ASSERT_EQ(pwrite(fd, "OVERWRITE", 9, 0), 9);  // into the old mount's page cache only
  EXPECT_NE(fsync(fd), 0);                      // ... which can never reach the disk
  close(fd);
  EXPECT_NE(ErrnoOr0(mkdir((mnt_ + "/late").c_str(), 0755)), 0);
  EXPECT_EQ(Slurp(other + "/first"), "from the first mount");
  EXPECT_FALSE(fs::exists(other + "/late"));
  Archil({"unmount", "-f", mnt_});
  ASSERT_EQ(Archil({"unmount", other}).exit_code, 0);
}

TEST_F(MountTest, MountHelperTakesFstabOptions) {
  StartServer();
  std::string id = CreateDisk("helper");
  std::string token_file = (dir_ / "helper.token").string();
  std::ofstream(token_file) << env_["ARCHIL_MOUNT_TOKEN"] << "\n";
  env_.erase("ARCHIL_MOUNT_TOKEN");
  Ran bad = RunCommand({kBin + "/mount.archil", "helper", mnt_, "-o", "rw,bogus"}, env_);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bogus"), std::string::npos) << bad.err;
  Ran r = RunCommand(
      {kBin + "/mount.archil", "helper", mnt_, "-o", "rw,_netdev,ro,token_file=" + token_file},
      env_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ErrnoOr0(mkdir((mnt_ + "/x").c_str(), 0755)), EROFS);
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

// A client that knows only the API's address (ARCHIL_ENDPOINT, no advertisement, no regions
// file) mounts: the API says where its disk server is (GET /api/region). An API that does not
// answer is named in the error.
TEST_F(MountTest, TheApisAddressAloneIsEnoughToMount) {
  StartServer();
  CreateDisk("endpoint");
  json advert = json::parse(ReadFile((dir_ / "run" / "test-1.json").string()), nullptr, false);
  ASSERT_TRUE(advert.is_object());
  const std::string api = advert.value("api", "");
  fs::create_directories(dir_ / "client-run");
  env_["ARCHIL_RUN_DIR"] = (dir_ / "client-run").string();  // no advertisement here
  env_["ARCHIL_ENDPOINT"] = "http://127.0.0.1:" + std::to_string(FreePort());
  Ran dead = Mount("endpoint");
  EXPECT_NE(dead.exit_code, 0);
  EXPECT_NE(dead.err.find("ask the API at " + env_["ARCHIL_ENDPOINT"]), std::string::npos)
      << dead.err;
  EXPECT_FALSE(FindMount(mnt_));

  env_["ARCHIL_ENDPOINT"] = api;
  Ran mounted = Mount("endpoint");
  ASSERT_EQ(mounted.exit_code, 0) << mounted.err;
  std::ofstream(mnt_ + "/hello") << "from the endpoint alone";
  EXPECT_EQ(Slurp(mnt_ + "/hello"), "from the endpoint alone");
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
}

// The server's file system fills up (a small tmpfs under its data directory): the writer gets
// ENOSPC, deletes still work and give the space back, and every write acknowledged before is
// still there after a remount.
TEST_F(MountTest, FullServerDiskGivesEnospcAndLosesNothing) {
  // The engine keeps a 256 MiB reserve free for deletes and its own flushes, and a new server
  // takes about 80 MiB: 400 MiB leaves about 64 MiB for data.
  ScopedTmpfs data((dir_ / "data").string(), "400m");
  ASSERT_TRUE(data.ok()) << std::strerror(data.error());
  const std::vector<std::string> listen = {"--mount-listen",
                                           "127.0.0.1:" + std::to_string(FreePort())};
  StartServer(listen);
  CreateDisk("full");
  Ran mounted = Mount("full");
  ASSERT_EQ(mounted.exit_code, 0) << mounted.err;

  const std::string path = mnt_ + "/records";
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  // Made now: on a full disk a new name is refused too (ENOSPC from open).
  int direct =
      open((mnt_ + "/direct").c_str(), O_CREAT | O_WRONLY | O_DIRECT | O_SYNC | O_CLOEXEC, 0644);
  ASSERT_GE(direct, 0);
  std::vector<char> rec(64 << 10);
  long acked = 0;
  int err = 0;
  for (long i = 0; i < 4000; ++i) {  // 250 MiB at most: far more than fits
    std::memset(rec.data(), 'a' + static_cast<int>(i % 26), rec.size());
    std::snprintf(rec.data(), 32, "record %ld", i);
    if (pwrite(fd, rec.data(), rec.size(), off_t{i} * off_t(rec.size())) !=
            static_cast<ssize_t>(rec.size()) ||
        fsync(fd) != 0) {
      err = errno;
      break;
    }
    acked = i + 1;
  }
  close(fd);
  EXPECT_EQ(err, ENOSPC) << "after " << acked << " records";
  EXPECT_GT(acked, 100);
  // A new name costs a few hundred bytes of log in space RocksDB has already allocated, and the
  // guard admits it while a block is left above the reserve; the space a refused write left (and
  // what the reclaimer gave back) may hold thousands. So a create here either works or is
  // refused with ENOSPC, never anything else (the engine's full-disk test checks which against
  // its model).
  for (int i = 0; i < 64; ++i) {
    int n = open((mnt_ + "/new" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (n >= 0) {
      close(n);
    } else {
      ASSERT_EQ(errno, ENOSPC) << "new name " << i << ": " << std::strerror(errno);
    }
  }
  // An O_DIRECT|O_SYNC write is refused at once, by write(2) itself.
  void* block = nullptr;
  ASSERT_EQ(posix_memalign(&block, 4096, 1 << 20), 0);
  std::memset(block, 'd', 1 << 20);
  ssize_t w = 0;
  for (int i = 0; i < 64 && (w = pwrite(direct, block, 1 << 20, off_t{i} << 20)) > 0; ++i) {
  }
  EXPECT_EQ(w, -1);
  EXPECT_EQ(errno, ENOSPC);
  free(block);
  close(direct);

  // Every acknowledged record survives a remount.
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("full").exit_code, 0);
  std::string back = Slurp(path);
  ASSERT_GE(back.size(), size_t(acked) * rec.size());
  for (long i = 0; i < acked; ++i) {
    std::string want = "record " + std::to_string(i);
    ASSERT_EQ(back.compare(size_t(i) * rec.size(), want.size(), want), 0) << "record " << i;
  }
  // Deletes work on a full disk and give the space back at once, without a restart: the
  // engine closes the open segment they emptied and flushes the WAL that held the small writes'
  // bytes before it refuses a write. Half of what was written fits again.
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(unlink((mnt_ + "/direct").c_str()), 0);
  int f = open((mnt_ + "/after").c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(f, 0) << std::strerror(errno);
  for (long i = 0; i < acked / 2; ++i) {
    ASSERT_EQ(pwrite(f, rec.data(), rec.size(), off_t{i} * off_t(rec.size())), ssize_t(rec.size()))
        << "record " << i << " of " << acked / 2 << ": " << std::strerror(errno);
    ASSERT_EQ(fsync(f), 0) << "record " << i << ": " << std::strerror(errno);
  }
  close(f);
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  StopServer();
}

TEST_F(MountTest, MountCyclesLeakNothing) {
  StartServer();
  CreateDisk("cycles");
  auto count = [&](const char* what) {
    std::error_code ec;
    long n = 0;
    for (auto it = fs::directory_iterator("/proc/" + std::to_string(server_) + "/" + what, ec);
         !ec && it != fs::directory_iterator(); ++it) {
      ++n;
    }
    return n;
  };
  ASSERT_EQ(Mount("cycles").exit_code, 0);
  std::ofstream(mnt_ + "/f") << "x";
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  const long fds = count("fd"), threads = count("task");
  std::vector<pid_t> daemons;
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(Mount("cycles").exit_code, 0) << "cycle " << i;
    daemons.push_back(DaemonPid(mnt_));
    ASSERT_EQ(Slurp(mnt_ + "/f"), "x");
    ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0) << "cycle " << i;
  }
  EXPECT_LE(count("fd"), fds + 2);
  EXPECT_LE(count("task"), threads + 2);
  for (pid_t d : daemons) EXPECT_FALSE(ProcessAlive(d));
  EXPECT_FALSE(FindMountedHere());
  EXPECT_TRUE(ListMountRecords((dir_ / "run").string()).empty());
}

}  // namespace

// Write-back of names and attributes (docs/adr/0027): with a write-back bound far away, what the
// mount did is answered unsynced (the mount record says how much); an fsync of a directory sends
// one COMMIT and leaves nothing unsynced; an fsync with nothing unsynced sends none. A --sync mount
// never has anything unsynced and never commits.
// Creating and removing files in a directory this mount made costs no LOOKUP (the name is known
// absent) and no GETATTR of the directory (its attributes came with each change's answer), and
// what the kernel was told of the directory is what the disk holds after a remount.
TEST_F(MountTest, FilesInANewDirectoryCostNoLookupAndNoGetattrOfTheDirectory) {
  StartServer();
  CreateDisk("names");
  ASSERT_EQ(Mount("names").exit_code, 0);
  const std::string dir = mnt_ + "/d";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const double lookups = Requests("LOOKUP"), getattrs = Requests("GETATTR");
  constexpr int kFiles = 40;
  for (int i = 0; i < kFiles; ++i) {
    const std::string f = dir + "/f" + std::to_string(i);
    const int fd = ::open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    ASSERT_GE(fd, 0) << f;
    ASSERT_EQ(::write(fd, "x", 1), 1);
    ASSERT_EQ(::close(fd), 0);
  }
  for (int i = 0; i < kFiles; i += 2) {
    ASSERT_EQ(::unlink((dir + "/f" + std::to_string(i)).c_str()), 0);
  }
  ASSERT_EQ(::mkdir((dir + "/sub").c_str(), 0700), 0);
  EXPECT_LE(Requests("LOOKUP") - lookups, 2) << "a lookup of a name known absent was sent";
  EXPECT_LE(Requests("GETATTR") - getattrs, 4) << "the directory's attributes were asked for";
  struct stat before {};
  ASSERT_EQ(::stat(dir.c_str(), &before), 0);
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("names").exit_code, 0);
  struct stat after {};
  ASSERT_EQ(::stat(dir.c_str(), &after), 0);
  EXPECT_EQ(before.st_nlink, after.st_nlink);
  EXPECT_EQ(before.st_nlink, 3u);
  EXPECT_EQ(before.st_mode, after.st_mode);
  EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  EXPECT_EQ(before.st_ctim.tv_nsec, after.st_ctim.tv_nsec);
  EXPECT_EQ(::access((dir + "/f1").c_str(), F_OK), 0);
  EXPECT_NE(::access((dir + "/f0").c_str(), F_OK), 0);
}

// Unpacking a file (create, write, fchown, fchmod, futimens, close: what tar does; and a POSIX
// ACL refused, as `cp -a` sets) costs no request of its own: the create (in a directory whose
// names and attributes the mount knows, with a number granted to its session), the kernel's
// WRITE, GETATTR and four SETATTRs are answered by the mount, and reach the disk ahead of the next
// request (ADR 0025, ADR 0028, ADR 0029); the ACL is refused by the mount. After a remount the disk
// holds what the kernel was told: names, data, owner, mode, times, size.
TEST_F(MountTest, AnUnpackedFileIsAnsweredByTheMountAndKeepsItsDataAndAttributes) {
  StartServer();
  CreateDisk("attrs");
  ASSERT_EQ(Mount("attrs").exit_code, 0);
  const std::string dir = mnt_ + "/d";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::vector<std::string> ops = {"SETATTR", "GETATTR", "LOOKUP",  "PUT_ATTRS",
                                        "WRITE",   "MKNOD",   "SETXATTR"};
  std::map<std::string, double> before;
  for (const std::string& op : ops) before[op] = Requests(op);
  constexpr int kFiles = 40;
  std::vector<struct stat> shown(kFiles);
  for (int i = 0; i < kFiles; ++i) {
    const std::string f = dir + "/f" + std::to_string(i);
    const int fd = ::open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    ASSERT_GE(fd, 0) << f;
    ASSERT_EQ(::write(fd, "0123456789", 1 + i % 10), 1 + i % 10);
    ASSERT_EQ(::fchown(fd, 1000 + i, 2000 + i), 0);
    ASSERT_EQ(::fchmod(fd, i % 2 ? 0600 : 0751), 0);
    const timespec times[2] = {{1'000'000 + i, 7}, {2'000'000 + i, 9}};
    ASSERT_EQ(::futimens(fd, times), 0);
    // What `cp -a` does next: a POSIX ACL the disk does not take. The times must survive it.
    ASSERT_NE(::fsetxattr(fd, "system.posix_acl_access", "\2\0\0\0", 4, 0), 0);
    ASSERT_EQ(::close(fd), 0);
  }
  EXPECT_LE(Requests("SETATTR") - before["SETATTR"], 2) << "SETATTRs were sent, not answered";
  EXPECT_LE(Requests("GETATTR") - before["GETATTR"], 2);
  EXPECT_LE(Requests("LOOKUP") - before["LOOKUP"], 2);
  EXPECT_LE(Requests("PUT_ATTRS") - before["PUT_ATTRS"], 2);
  EXPECT_LE(Requests("WRITE") - before["WRITE"], 2) << "WRITEs were sent, not answered";
  EXPECT_EQ(Requests("MKNOD") - before["MKNOD"], 0)
      << "d's attributes came with its MKDIR's answer: even the first create is the mount's";
  EXPECT_EQ(Requests("SETXATTR") - before["SETXATTR"], 0) << "refused by the mount";
  const std::string metrics = Archil({"metrics", mnt_}).out;
  EXPECT_GE(MetricValue(metrics, "archil_mount_local_creates_total"), kFiles - 1);
  EXPECT_GE(MetricValue(metrics, "archil_mount_local_setattrs_total"), 3 * kFiles);
  EXPECT_GE(MetricValue(metrics, "archil_mount_local_writes_total"), kFiles - 2);
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_EQ(::stat((dir + "/f" + std::to_string(i)).c_str(), &shown[i]), 0);
  }
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("attrs").exit_code, 0);
  for (int i = 0; i < kFiles; ++i) {
    struct stat st {};
    ASSERT_EQ(::stat((dir + "/f" + std::to_string(i)).c_str(), &st), 0);
    SCOPED_TRACE("f" + std::to_string(i));
    EXPECT_EQ(st.st_mode, S_IFREG | (i % 2 ? 0600u : 0751u));
    EXPECT_EQ(st.st_uid, 1000u + i);
    EXPECT_EQ(st.st_gid, 2000u + i);
    EXPECT_EQ(st.st_size, 1 + i % 10);
    EXPECT_EQ(st.st_atim.tv_sec, 1'000'000 + i);
    EXPECT_EQ(st.st_atim.tv_nsec, 7);
    EXPECT_EQ(st.st_mtim.tv_sec, 2'000'000 + i);
    EXPECT_EQ(st.st_mtim.tv_nsec, 9);
    EXPECT_EQ(st.st_mode, shown[i].st_mode);
    EXPECT_EQ(st.st_uid, shown[i].st_uid);
    EXPECT_EQ(ReadFile(dir + "/f" + std::to_string(i)),
              std::string("0123456789").substr(0, 1 + i % 10));
  }
}

// The kernel looks a name up again before every exclusive create (mkdir, open O_EXCL), even when
// it has the entry: `mkdir -p` of a path that exists, and tar making each directory it meets
// again, sent a LOOKUP per component. The mount answers a name it saw naming an inode whose
// attributes it knows (here, directories it made), and their first create too.
TEST_F(MountTest, MkdirPOfAPathThatExistsCostsNoRequest) {
  StartServer();
  CreateDisk("mkdirp");
  ASSERT_EQ(Mount("mkdirp").exit_code, 0);
  const std::string top = mnt_ + "/a";
  ASSERT_EQ(RunCommand({"/bin/mkdir", "-p", top + "/b/c/d"}, env_).exit_code, 0);
  std::map<std::string, double> before;
  for (const char* op : {"LOOKUP", "GETATTR", "MKDIR", "MKNOD"}) before[op] = Requests(op);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(RunCommand({"/bin/mkdir", "-p", top + "/b/c/d"}, env_).exit_code, 0);
    for (const char* dir : {"/b", "/b/c", "/b/c/d"}) {
      ASSERT_NE(::mkdir((top + dir).c_str(), 0755), 0);
      EXPECT_EQ(errno, EEXIST);
    }
    const std::string f = top + "/b/c/d/f" + std::to_string(i);
    const int fd = ::open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    ASSERT_GE(fd, 0) << f;
    ASSERT_EQ(::close(fd), 0);
  }
  EXPECT_EQ(Requests("LOOKUP") - before["LOOKUP"], 0);
  EXPECT_EQ(Requests("GETATTR") - before["GETATTR"], 0);
  EXPECT_EQ(Requests("MKDIR") - before["MKDIR"], 0);
  EXPECT_EQ(Requests("MKNOD") - before["MKNOD"], 0);
  EXPECT_GE(MetricValue(Archil({"metrics", mnt_}).out, "archil_mount_local_lookups_total"), 60);
  // What the mount answered is what the disk holds.
  struct stat st {};
  ASSERT_EQ(::stat((top + "/b/c").c_str(), &st), 0);
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("mkdirp").exit_code, 0);
  struct stat after {};
  ASSERT_EQ(::stat((top + "/b/c").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, st.st_ino);
  EXPECT_EQ(after.st_mode, st.st_mode);
  EXPECT_EQ(after.st_nlink, st.st_nlink);
  EXPECT_EQ(after.st_mtim.tv_sec, st.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, st.st_mtim.tv_nsec);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(::access((top + "/b/c/d/f" + std::to_string(i)).c_str(), F_OK), 0) << i;
  }
}

// The names of `dir`, in the order readdir(3) gives them, without "." and "..".
std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  EXPECT_NE(d, nullptr) << dir;
  if (d == nullptr) return names;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

// Directories made in a directory whose names the mount knows are answered by the mount (a
// number of its session's grant, carried ahead of the next request like a file's create): a tree
// of directories and files costs no MKDIR, MKNOD, LOOKUP or GETATTR. The kernel is shown the
// times and link counts the disk holds after a remount; a directory listed, renamed or removed
// before its create was sent is sent first; the set-group-ID bit is inherited.
TEST_F(MountTest, ATreeOfNewDirectoriesIsAnsweredByTheMountAndIsWhatTheDiskHolds) {
  StartServer();
  CreateDisk("mkdirs");
  ASSERT_EQ(Mount("mkdirs").exit_code, 0);
  const std::string top = mnt_ + "/top";
  ASSERT_EQ(::mkdir(top.c_str(), 0755), 0);  // the root's names are not known: the server's
  ASSERT_EQ(::chmod(top.c_str(), 02775), 0);
  // One create first: the session's grant of numbers is asked for once.
  ASSERT_EQ(::close(::open((top + "/first").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644)), 0);
  std::map<std::string, double> before;
  const std::vector<std::string> ops = {"MKDIR", "MKNOD", "LOOKUP", "GETATTR", "INO_GRANT"};
  for (const std::string& op : ops) before[op] = Requests(op);
  std::vector<std::string> dirs;
  for (int i = 0; i < 6; ++i) {
    const std::string a = top + "/a" + std::to_string(i);
    ASSERT_EQ(RunCommand({"/bin/mkdir", "-p", a + "/b/c"}, env_).exit_code, 0);
    ASSERT_EQ(::mkdir((a + "/e").c_str(), 0700), 0);
    for (const std::string& d : {a, a + "/b", a + "/b/c", a + "/e"}) {
      dirs.push_back(d);
      const int fd = ::open((d + "/f").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
      ASSERT_GE(fd, 0) << d;
      ASSERT_EQ(::write(fd, d.data(), d.size()), static_cast<ssize_t>(d.size()));
      ASSERT_EQ(::close(fd), 0);
    }
  }
  for (const std::string& op : ops) {
    EXPECT_EQ(Requests(op) - before[op], 0) << op << " sent for a tree the mount knows";
  }
  EXPECT_GE(MetricValue(Archil({"metrics", mnt_}).out, "archil_mount_local_creates_total"), 48);

  // What the kernel was shown, before the creates are sent.
  std::map<std::string, struct stat> shown;
  for (const std::string& d : dirs) ASSERT_EQ(::stat(d.c_str(), &shown[d]), 0) << d;
  ASSERT_EQ(::stat(top.c_str(), &shown[top]), 0);
  EXPECT_EQ(shown[top].st_nlink, 8u) << "its own, \".\" and six subdirectories' \"..\"";
  EXPECT_EQ(shown[top + "/a0"].st_nlink, 4u);
  EXPECT_EQ(shown[top + "/a0/e"].st_mode, static_cast<mode_t>(S_IFDIR | 02700))
      << "set-group-ID inherited from top";
  EXPECT_EQ(shown[top + "/a0/e"].st_gid, shown[top].st_gid);

  // Listing, renaming and removing directories whose creates were not sent yet.
  std::vector<std::string> listed = Listing(top + "/a1/b");
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, (std::vector<std::string>{"c", "f"}));
  ASSERT_EQ(::mkdir((top + "/gone").c_str(), 0755), 0);
  ASSERT_EQ(::rmdir((top + "/gone").c_str()), 0);
  ASSERT_EQ(::mkdir((top + "/from").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((top + "/from/in").c_str(), 0755), 0);
  ASSERT_EQ(::rename((top + "/from").c_str(), (top + "/to").c_str()), 0);
  struct stat moved {};
  ASSERT_EQ(::stat((top + "/to/in").c_str(), &moved), 0);
  ASSERT_EQ(::stat(top.c_str(), &shown[top]), 0);

  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("mkdirs").exit_code, 0);
  for (const auto& [d, was] : shown) {
    struct stat now {};
    ASSERT_EQ(::stat(d.c_str(), &now), 0) << d;
    EXPECT_EQ(now.st_ino, was.st_ino) << d;
    EXPECT_EQ(now.st_mode, was.st_mode) << d;
    EXPECT_EQ(now.st_nlink, was.st_nlink) << d;
    EXPECT_EQ(now.st_uid, was.st_uid) << d;
    EXPECT_EQ(now.st_gid, was.st_gid) << d;
    EXPECT_EQ(now.st_mtim.tv_sec, was.st_mtim.tv_sec) << d;
    EXPECT_EQ(now.st_mtim.tv_nsec, was.st_mtim.tv_nsec) << d;
    EXPECT_EQ(now.st_ctim.tv_nsec, was.st_ctim.tv_nsec) << d;
    if (d == top) continue;
    std::ifstream in(d + "/f");
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(data, d) << d;
  }
  EXPECT_NE(::access((top + "/gone").c_str(), F_OK), 0);
  EXPECT_NE(::access((top + "/from").c_str(), F_OK), 0);
  struct stat in_after {};
  ASSERT_EQ(::stat((top + "/to/in").c_str(), &in_after), 0);
  EXPECT_EQ(in_after.st_ino, moved.st_ino);
}

// Removing a tree the mount made (`rm -rf`) is answered by the mount: files are unlinks of their
// only name and each emptied directory a remove put the server applies only if it is empty; few
// UNLINKs or RMDIRs go to the server. An rmdir of a directory that is not empty, or open, goes to
// the server. After a remount the tree is gone and the parent's link count and times are those
// the kernel was shown.
TEST_F(MountTest, RemovingATreeTheMountMadeIsAnsweredByTheMount) {
  StartServer();
  CreateDisk("rmtree");
  ASSERT_EQ(Mount("rmtree").exit_code, 0);
  const std::string top = mnt_ + "/top";
  ASSERT_EQ(::mkdir(top.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((top + "/keep").c_str(), 0755), 0);
  for (int i = 0; i < 5; ++i) {
    const std::string d = top + "/d" + std::to_string(i);
    ASSERT_EQ(RunCommand({"/bin/mkdir", "-p", d + "/x/y"}, env_).exit_code, 0);
    for (const std::string& in : {d, d + "/x/y"}) {
      ASSERT_EQ(::close(::open((in + "/f").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644)), 0);
    }
  }
  ASSERT_EQ(::close(::open((top + "/keep/f").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644)), 0);
  const int top_fd = ::open(top.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(top_fd, 0);
  ASSERT_EQ(::fsync(top_fd), 0);
  ::close(top_fd);
  auto local_removes = [&] {
    return MetricValue(Archil({"metrics", mnt_}).out, "archil_mount_local_removes_total");
  };
  const double removed_here = local_removes();
  double unlinks = Requests("UNLINK"), rmdirs = Requests("RMDIR");
  const double readdirs = Requests("READDIR");
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(RunCommand({"/bin/rm", "-rf", top + "/d" + std::to_string(i)}, env_).exit_code, 0);
  }
  // 10 files and 15 directories. Some may still go to the server: a directory the kernel has not
  // yet told the mount was closed (RELEASEDIR is sent asynchronously) is removed by the server
  // for its holder, and nothing is answered here while the 2-s pass is in flight.
  const double sent = Requests("UNLINK") - unlinks + Requests("RMDIR") - rmdirs;
  EXPECT_LE(sent, 6) << "removes sent to the server";
  EXPECT_GE(local_removes() - removed_here, 25 - sent);
  // rm lists each directory twice (one page, then again to its end): the second from the first.
  EXPECT_LE(Requests("READDIR") - readdirs, 15 + 3);
  rmdirs = Requests("RMDIR");
  EXPECT_NE(::rmdir((top + "/keep").c_str()), 0);
  EXPECT_EQ(errno, ENOTEMPTY);
  EXPECT_EQ(Requests("RMDIR") - rmdirs, 1) << "not empty: the server says so";
  ASSERT_EQ(::mkdir((top + "/open").c_str(), 0755), 0);
  const int open_dir = ::open((top + "/open").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(open_dir, 0);
  ASSERT_EQ(::rmdir((top + "/open").c_str()), 0);
  EXPECT_EQ(Requests("RMDIR") - rmdirs, 2) << "open: the server holds it for its holder";
  struct stat gone {};
  EXPECT_EQ(::fstat(open_dir, &gone), 0) << "an open directory removed is still there";
  ::close(open_dir);
  struct stat shown {};
  ASSERT_EQ(::stat(top.c_str(), &shown), 0);
  EXPECT_EQ(shown.st_nlink, 3u);
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("rmtree").exit_code, 0);
  struct stat after {};
  ASSERT_EQ(::stat(top.c_str(), &after), 0);
  EXPECT_EQ(after.st_nlink, shown.st_nlink);
  EXPECT_EQ(after.st_mtim.tv_sec, shown.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, shown.st_mtim.tv_nsec);
  std::vector<std::string> left = Listing(top);
  EXPECT_EQ(left, (std::vector<std::string>{"keep"}));
}

// The kernel keeps a listing it read to its end (cache_readdir) and lists the directory again from
// it, without a request to the mount; a change of the directory's names through the mount makes
// it ask again, and the listing shows the change.
TEST_F(MountTest, ADirectoryListedAgainIsListedFromTheKernelsCacheUntilItsNamesChange) {
  StartServer();
  CreateDisk("lscache");
  ASSERT_EQ(Mount("lscache").exit_code, 0);
  const std::string dir = mnt_ + "/d";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  for (int i = 0; i < 50; ++i) std::ofstream(dir + "/f" + std::to_string(i)) << "x";
  const double before = Requests("READDIR");
  const std::vector<std::string> first = Listing(dir);
  EXPECT_EQ(first.size(), 50u);
  const double listed = Requests("READDIR");
  EXPECT_GE(listed - before, 1);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Listing(dir), first);
  EXPECT_EQ(Requests("READDIR"), listed) << "listed again from the disk, not the kernel's cache";
  std::ofstream(dir + "/new") << "y";
  std::vector<std::string> now = Listing(dir);
  EXPECT_EQ(std::count(now.begin(), now.end(), "new"), 1);
  ASSERT_EQ(::unlink((dir + "/f0").c_str()), 0);
  ASSERT_EQ(::rename((dir + "/f1").c_str(), (dir + "/g1").c_str()), 0);
  now = Listing(dir);
  EXPECT_EQ(std::count(now.begin(), now.end(), "f0"), 0);
  EXPECT_EQ(std::count(now.begin(), now.end(), "f1"), 0);
  EXPECT_EQ(std::count(now.begin(), now.end(), "g1"), 1);
  EXPECT_EQ(now.size(), 50u);
}

// Removing a tree (what `rm -rf` does: unlink each file, then rmdir) costs no request per file:
// an unlink of the only name of a file the mount saw and does not have open is answered by the
// mount and rides, in batches of at most 256, with the next request (ADR 0025); the kernel's
// SETATTR of the removed file's change time is answered too. A file with another name, a file
// open here and a name created again after its removal keep their meaning. After a remount the
// disk holds what the kernel was told.
TEST_F(MountTest, ARemovedTreeCostsARequestPerBatchAndKeepsWhatStays) {
  StartServer();
  CreateDisk("rm");
  ASSERT_EQ(Mount("rm").exit_code, 0);
  const std::string dir = mnt_ + "/d";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  constexpr int kFiles = 300;
  auto path = [&](int i) { return dir + "/f" + std::to_string(i); };
  auto write = [](const std::string& p, const std::string& data) {
    std::ofstream out(p);
    out << data;
    ASSERT_TRUE(out.good()) << p;
  };
  for (int i = 0; i < kFiles; ++i) write(path(i), "data" + std::to_string(i));
  ASSERT_EQ(::link(path(0).c_str(), (mnt_ + "/other").c_str()), 0);
  const int open_fd = ::open(path(1).c_str(), O_RDONLY);
  ASSERT_GE(open_fd, 0);
  SyncMount();
  const double unlinks = Requests("UNLINK"), setattrs = Requests("SETATTR");
  for (int i = 0; i < kFiles; ++i) ASSERT_EQ(::unlink(path(i).c_str()), 0) << i;
  EXPECT_LE(Requests("UNLINK") - unlinks, 6) << "f0 (two names), f1 (open), one per batch";
  EXPECT_LE(Requests("SETATTR") - setattrs, 2) << "the removed files' change times were sent";
  EXPECT_GE(MetricValue(Archil({"metrics", mnt_}).out, "archil_mount_local_removes_total"),
            kFiles - 6);
  struct stat st {};
  ASSERT_EQ(::stat((mnt_ + "/other").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u) << "its other name went";
  char buf[16] = {};
  EXPECT_EQ(::pread(open_fd, buf, sizeof buf, 0), 5) << "open here: it outlives its name";
  EXPECT_EQ(std::string(buf, 5), "data1");
  ASSERT_EQ(::close(open_fd), 0);
  write(path(7), "again");  // a name created again after its removal
  ASSERT_EQ(::rmdir(dir.c_str()), -1);
  EXPECT_EQ(errno, ENOTEMPTY);
  ASSERT_EQ(::unlink(path(7).c_str()), 0);
  write(path(8), "last");
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("rm").exit_code, 0);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename());
  }
  EXPECT_EQ(names, std::vector<std::string>{"f8"});
  EXPECT_EQ(ReadFile(path(8)), "last");
  EXPECT_EQ(ReadFile(mnt_ + "/other"), "data0");
  ASSERT_EQ(::stat((mnt_ + "/other").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
  ASSERT_EQ(::unlink(path(8).c_str()), 0);
  ASSERT_EQ(::rmdir(dir.c_str()), 0) << "every remove applied before the rmdir";
}

// A tree read file by file in the order its directories list it (as `cat $(find ...)`, `grep -r`
// or `tar c` read one) after a fresh mount: every file after the first of its directory is read
// ahead of the reader, each file costs one READ (none read twice, none for nothing), and every
// byte is the file's.
TEST_F(MountTest, ATreeReadInItsListingOrderIsReadAheadOneReadPerFile) {
  StartServer();
  CreateDisk("tree");
  ASSERT_EQ(Mount("tree").exit_code, 0);
  std::map<std::string, std::string> files;  // path under the mount -> content
  int nonempty = 0;
  auto write = [&](const std::string& rel, size_t size) {
    std::string data(size, '\0');
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>((i * 7 + rel.size() * 13) & 0xff);
    std::ofstream out(mnt_ + "/" + rel, std::ios::binary);
    out << data;
    ASSERT_TRUE(out.good()) << rel;
    files[rel] = data;
    if (size != 0) ++nonempty;
  };
  ASSERT_EQ(::mkdir((mnt_ + "/d").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((mnt_ + "/d/sub").c_str(), 0755), 0);
  // At most 16 KiB each: the kernel reads each in one READ.
  for (int i = 0; i < 40; ++i) write("d/f" + std::to_string(i), i == 5 ? 0 : 1 + i * 401);
  for (int i = 0; i < 10; ++i) write("d/sub/g" + std::to_string(i), 100 + i);
  SyncMount();
  ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  ASSERT_EQ(Mount("tree").exit_code, 0);  // nothing cached in the kernel or the daemon

  const double reads = Requests("READ");
  int seen = 0;
  std::function<void(const std::string&)> walk = [&](const std::string& rel) {
    for (const auto& e : std::filesystem::directory_iterator(mnt_ + "/" + rel)) {
      const std::string child = rel + "/" + e.path().filename().string();
      if (e.is_directory()) {
        walk(child);
        continue;
      }
      EXPECT_EQ(ReadFile(mnt_ + "/" + child), files[child]) << child;
      ++seen;
    }
  };
  walk("d");
  EXPECT_EQ(seen, 50);
  const std::string m = Archil({"metrics", mnt_}).out;
  EXPECT_EQ(Requests("READ") - reads, nonempty) << "one READ per file with data";
  // Read by its own READ: the first file begun, and the first in the subdirectory (listed after
  // the walk of its parent passed it) unless the walk came to the parent's files from it.
  const double ahead = MetricValue(m, "archil_mount_read_ahead_files_total");
  EXPECT_GE(ahead, nonempty - 2);
  EXPECT_LE(ahead, nonempty - 1);
  EXPECT_EQ(MetricValue(m, "archil_mount_read_ahead_dropped_total"), 0);
}

// What the mount answered itself follows the order of operations: a `kill -9` of the daemon
// leaves the disk with an answered chmod whenever an operation after it survived, and an fsync
// makes it durable (a server killed after it loses nothing either).
TEST_F(MountTest, AChmodTheMountAnsweredSurvivesWithEveryLaterOperationAndItsFsync) {
  const std::vector<std::string> listen = {"--mount-listen",
                                           "127.0.0.1:" + std::to_string(FreePort())};
  StartServer(listen);
  CreateDisk("order");
  ASSERT_EQ(Mount("order").exit_code, 0);
  auto local_setattrs = [&] {
    return MetricValue(Archil({"metrics", mnt_}).out, "archil_mount_local_setattrs_total");
  };
  auto kill_daemon = [&] {
    const pid_t daemon = DaemonPid(mnt_);
    ASSERT_GT(daemon, 0);
    ASSERT_EQ(kill(daemon, SIGKILL), 0);
    for (int i = 0; i < 200 && ProcessAlive(daemon); ++i) usleep(5000);
  };
  const std::string f = mnt_ + "/f", h = mnt_ + "/h";
  ASSERT_EQ(::close(::open(f.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644)), 0);
  const double answered = local_setattrs();
  ASSERT_EQ(::chmod(f.c_str(), 0600), 0);
  ASSERT_EQ(local_setattrs(), answered + 1) << "the chmod was not answered by the mount";
  ASSERT_EQ(::mkdir((mnt_ + "/later").c_str(), 0755), 0);
  kill_daemon();
  ASSERT_EQ(Mount("order").exit_code, 0);
  struct stat st {};
  ASSERT_EQ(::stat((mnt_ + "/later").c_str(), &st), 0);
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u) << "an operation survived without the chmod before it";

  const int fd = ::open(h.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  const double answered2 = local_setattrs();
  ASSERT_EQ(::fchmod(fd, 0604), 0);
  ASSERT_EQ(local_setattrs(), answered2 + 1);
  ASSERT_EQ(::fsync(fd), 0);
  ASSERT_EQ(::close(fd), 0);
  kill_daemon();
  KillServer();
  StartServer(listen);
  ASSERT_EQ(Mount("order").exit_code, 0);
  ASSERT_EQ(::stat(h.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0604u) << "an fsynced chmod was lost";
}

// The prefix property under `kill -9` of the daemon, with random operations: creates, appends,
// chmod, chown, utimensat, renames, unlinks and fsyncs on ten names, the creates, attribute
// changes, appends and unlinks among them answered by the mount (ADR 0025, ADR 0028, ADR 0029).
// After each kill and remount the disk must hold the state after some prefix of the operations
// that contains every operation but trailing creates, attribute changes, appends and unlinks
// (everything else was answered by the server), and none after the one the kill interrupted.
// The first three rounds kill the daemon after their last operation (and check that the mount
// answered some of each kind itself); the others at a random moment within their operations,
// from another thread, so that the kill lands in a request, a PUT_ATTRS in flight or a sync.
// Rounds: ARCHIL_CLIENT_CRASH_ROUNDS, else what tests/CMakeLists.txt builds in (CI's: 200, fewer
// under ASan); scripts/crashtest.sh --client N runs N. Seed: ARCHIL_TEST_SEED, else the clock;
// printed.
TEST_F(MountTest, AKilledDaemonLeavesAPrefixOfItsOperations) {
  uint64_t seed =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  if (const char* e = std::getenv("ARCHIL_TEST_SEED"); e != nullptr && *e != '\0') {
    seed = std::strtoull(e, nullptr, 10);
  }
  int rounds = ARCHIL_CLIENT_CRASH_ROUNDS;
  if (const char* e = std::getenv("ARCHIL_CLIENT_CRASH_ROUNDS"); e != nullptr && *e != '\0') {
    rounds = std::max(1, std::atoi(e));
  }
  std::printf("seed=%llu (replay: ARCHIL_TEST_SEED=%llu), %d rounds\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed), rounds);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  StartServer();
  CreateDisk("prefix");
  ASSERT_EQ(Mount("prefix").exit_code, 0);
  const std::string dir = mnt_ + "/d";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);

  // What a name holds, as far as the operations say (mtime: only after an explicit utimensat).
  struct File {
    uint32_t mode = 0644;
    uid_t uid = 0;
    gid_t gid = 0;
    off_t size = 0;
    std::optional<int64_t> mtime;
  };
  using State = std::map<int, File>;
  auto path = [&](int i) { return dir + "/f" + std::to_string(i); };
  auto observe = [&] {
    State st;
    for (int i = 0; i < 10; ++i) {
      struct stat sb {};
      if (::lstat(path(i).c_str(), &sb) != 0) continue;
      st[i] = File{sb.st_mode & 07777, sb.st_uid, sb.st_gid, sb.st_size, sb.st_mtim.tv_sec};
    }
    return st;
  };
  // Whether `seen` is `model` (mtimes compared where the model knows them).
  auto matches = [](const State& model, const State& seen) {
    if (model.size() != seen.size()) return false;
    for (const auto& [i, f] : model) {
      auto it = seen.find(i);
      if (it == seen.end()) return false;
      const File& g = it->second;
      if (g.mode != f.mode || g.uid != f.uid || g.gid != f.gid || g.size != f.size) return false;
      if (f.mtime && g.mtime != f.mtime) return false;
    }
    return true;
  };
  const uint32_t modes[] = {0600, 0640, 0644, 0700, 0755};
  State model;
  int total_local = 0, total_writes = 0, total_creates = 0, total_removes = 0;
  int mid_work_kills = 0;
  size_t total_ops = 0;
  for (int round = 0; round < rounds; ++round) {
    const bool at_end = round < 3;
    const pid_t daemon = DaemonPid(mnt_);
    ASSERT_GT(daemon, 0);
    // A kill at a random moment: the operations below take 5-50 ms in all.
    std::atomic<bool> killed{false};
    std::thread killer;
    if (!at_end) {
      const auto delay = std::chrono::microseconds(rng() % 30000);
      killer = std::thread([daemon, delay, &killed] {
        std::this_thread::sleep_for(delay);
        killed = true;
        kill(daemon, SIGKILL);
      });
    }
    std::vector<State> states = {model};  // states[k]: after the round's first k operations
    std::vector<std::string> done;        // the round's operations, printed if it fails
    size_t must_hold = 0;                 // every operation up to here was answered by the server
    bool interrupted = false;             // the last operation failed: the kill came in it
    // A call on the mount that failed: the kill's doing (the round ends), else the test fails.
    auto failed = [&](const char* call) {
      if (!killed) ADD_FAILURE() << call << " failed: " << std::strerror(errno);
      interrupted = true;
    };
    int last = 0;
    for (int op = 0; op < 120 && !interrupted && !HasFailure(); ++op) {
      // Often the file of the last operation: the mount answers changes of a file it just made
      // or wrote, and the round's last operations are then often changes it has not sent.
      const int i = rng() % 2 ? last : static_cast<int>(rng() % 10);
      last = i;
      const bool exists = model.count(i) > 0;
      bool maybe_local = false;
      State next = model;
      const unsigned kind = static_cast<unsigned>(rng() % 8);
      switch (kind) {
        case 0:
        case 1:
          if (!exists) {
            next[i] = File{};
            maybe_local = true;  // in a directory it knows, the mount answers it (ADR 0025)
            const int fd = ::open(path(i).c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
            if (fd < 0 || ::close(fd) != 0) failed("create");
          } else {
            const size_t n = 1 + rng() % 100;
            next[i].size += static_cast<off_t>(n);
            next[i].mtime.reset();  // the kernel stamps it
            maybe_local = true;     // the mount may answer an append itself (ADR 0029)
            const int fd = ::open(path(i).c_str(), O_WRONLY | O_APPEND);
            bool ok = fd >= 0 && ::write(fd, std::string(n, 'x').data(), n) == ssize_t(n);
            if (fd >= 0 && ::close(fd) != 0) ok = false;
            if (!ok) failed("append");
          }
          break;
        case 2:
          if (!exists) continue;
          {
            const uint32_t mode = modes[rng() % 5];
            next[i].mode = mode;
            maybe_local = true;
            if (::chmod(path(i).c_str(), mode) != 0) failed("chmod");
            break;
          }
        case 3: {
          if (!exists) continue;
          const uid_t u = static_cast<uid_t>(rng() % 3) * 1000;
          const gid_t g = static_cast<gid_t>(rng() % 3) * 1000;
          next[i].uid = u;
          next[i].gid = g;
          maybe_local = true;
          if (::chown(path(i).c_str(), u, g) != 0) failed("chown");
          break;
        }
        case 4: {
          if (!exists) continue;
          const int64_t t = 1'000'000 + static_cast<int64_t>(rng() % 1000);
          const timespec times[2] = {{t, 0}, {t, 0}};
          next[i].mtime = t;
          maybe_local = true;
          if (::utimensat(AT_FDCWD, path(i).c_str(), times, 0) != 0) failed("utimensat");
          break;
        }
        case 5: {
          if (!exists) continue;
          const int j = static_cast<int>(rng() % 10);
          if (i != j) {
            next[j] = next[i];
            next.erase(i);
          } else {
            maybe_local = true;  // a rename onto itself: the kernel answers it, nothing is sent
          }
          if (::rename(path(i).c_str(), path(j).c_str()) != 0) failed("rename");
          break;
        }
        case 6:
          if (!exists) continue;
          next.erase(i);
          maybe_local = true;  // the only name of a file not open: the mount may answer it
          if (::unlink(path(i).c_str()) != 0) failed("unlink");
          break;
        case 7: {
          if (!exists) continue;
          const int fd = ::open(path(i).c_str(), O_RDONLY);
          bool ok = fd >= 0 && ::fsync(fd) == 0;
          if (fd >= 0 && ::close(fd) != 0) ok = false;
          if (!ok) failed("fsync");
          break;
        }
      }
      // `next`: the state after it. One the kill interrupted may have been applied, or not: its
      // state is allowed too, as the last one.
      model = std::move(next);
      states.push_back(model);
      if (!maybe_local && !interrupted) must_hold = states.size() - 1;
      done.push_back("op " + std::to_string(kind) + " on f" + std::to_string(i) +
                     (interrupted ? " (interrupted)" : ""));
    }
    ASSERT_FALSE(HasFailure());
    total_ops += done.size();
    if (at_end) {
      const std::string metrics = Archil({"metrics", mnt_}).out;
      // Each round's daemon counts from 0.
      total_local += static_cast<int>(MetricValue(metrics, "archil_mount_local_setattrs_total"));
      total_writes += static_cast<int>(MetricValue(metrics, "archil_mount_local_writes_total"));
      total_creates += static_cast<int>(MetricValue(metrics, "archil_mount_local_creates_total"));
      total_removes += static_cast<int>(MetricValue(metrics, "archil_mount_local_removes_total"));
      ASSERT_EQ(kill(daemon, SIGKILL), 0);
    } else {
      killer.join();
      if (interrupted) ++mid_work_kills;
    }
    for (int w = 0; w < 200 && ProcessAlive(daemon); ++w) usleep(5000);
    ASSERT_FALSE(ProcessAlive(daemon));
    ASSERT_EQ(Mount("prefix").exit_code, 0);
    const State seen = observe();
    bool found = false;
    for (size_t k = states.size(); k-- > must_hold;) {
      if (matches(states[k], seen)) {
        found = true;
        if (at_end || rounds <= 10) {
          std::printf("round %d: the disk holds the first %zu of %zu operations (%zu had to be)\n",
                      round, k, states.size() - 1, must_hold);
        }
        break;
      }
    }
    if (!found) {
      auto show = [](const char* what, const State& st) {
        std::printf("%s:", what);
        for (const auto& [i, f] : st) {
          std::printf(" f%d=%o/%u/%u/%lld/%lld", i, f.mode, f.uid, f.gid,
                      static_cast<long long>(f.size), static_cast<long long>(f.mtime.value_or(-1)));
        }
        std::printf("\n");
      };
      show("on the disk", seen);
      show("after every operation", states.back());
      show("after those that had to be there", states[must_hold]);
      for (const std::string& d : done) std::printf("%s; ", d.c_str());
      std::printf(
          "(op kinds: 0-1 create or append, 2 chmod, 3 chown, 4 utimensat, 5 rename, 6 unlink, "
          "7 fsync)\n");
    }
    ASSERT_TRUE(found) << "round " << round
                       << ": the disk holds no prefix of the operations that contains the first "
                       << must_hold;
    model = seen;  // what the next round starts from (mtimes as seen: compared only if set)
    for (auto& [i, f] : model) f.mtime.reset();
  }
  std::printf("%d crashes, 0 lost (%d of them in the middle of an operation; %zu operations)\n",
              rounds, mid_work_kills, total_ops);
  std::printf("%d attribute changes, %d writes, %d creates and %d unlinks answered by the mount\n",
              total_local, total_writes, total_creates, total_removes);
  EXPECT_GT(total_local, 0) << "no attribute change was answered by the mount";
  EXPECT_GT(total_creates, 0) << "no create was answered by the mount";
  EXPECT_GT(total_removes, 0) << "no unlink was answered by the mount";
}

TEST_F(MountTest, FsyncCommitsWhatTheServerAnsweredBeforeItsSync) {
  StartServer();
  CreateDisk("wb");
  auto unsynced = [&] {
    Ran s = Archil({"--json", "status", mnt_});
    json j = json::parse(s.out, nullptr, false);
    return j.is_object() ? j.value("unsynced", uint64_t{0}) : uint64_t{0};
  };
  // The requests that make what was answered durable: COMMIT, or a PUT_ATTRS that commits what
  // the mount answered itself with it (ADR 0029): one per fsync either way.
  auto commits = [&] {
    const std::string m = Archil({"metrics", mnt_}).out;
    return std::max(0.0, MetricValue(m, R"(archil_client_requests_total{op="COMMIT"})")) +
           std::max(0.0, MetricValue(m, R"(archil_client_requests_total{op="PUT_ATTRS"})"));
  };
  // Until `want` holds of the mount record (refreshed every second), at most 5 s.
  auto wait_unsynced = [&](const std::function<bool(uint64_t)>& want) {
    for (int i = 0; i < 50; ++i) {
      if (want(unsynced())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  for (const bool sync_mount : {false, true}) {
    SCOPED_TRACE(sync_mount ? "--sync" : "write-back");
    std::vector<std::string> flags = {"--writeback-ms", "600000"};
    if (sync_mount) flags.push_back("--sync");
    Ran m = Mount("wb", flags);
    ASSERT_EQ(m.exit_code, 0) << m.err;
    const std::string dir = mnt_ + (sync_mount ? "/s" : "/w");
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    for (int i = 0; i < 20; ++i) {
      const std::string f = dir + "/f" + std::to_string(i);
      const int fd = ::open(f.c_str(), O_CREAT | O_WRONLY, 0644);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::write(fd, "x", 1), 1);
      ASSERT_EQ(::close(fd), 0);
      ASSERT_EQ(::chmod(f.c_str(), 0600), 0);
    }
    const double before = commits();
    if (sync_mount) {
      EXPECT_FALSE(wait_unsynced([](uint64_t n) { return n > 0; }));
    } else {
      EXPECT_TRUE(wait_unsynced([](uint64_t n) { return n > 0; }))
          << "nothing was answered before the server's sync";
    }
    const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(d, 0);
    ASSERT_EQ(::fsync(d), 0);
    const double after = commits();
    EXPECT_EQ(after - before, sync_mount ? 0 : 1);
    EXPECT_TRUE(wait_unsynced([](uint64_t n) { return n == 0; }));
    ASSERT_EQ(::fsync(d), 0);
    EXPECT_EQ(commits(), after) << "an fsync with nothing unsynced sent a request";
    ::close(d);
    ASSERT_EQ(Archil({"unmount", mnt_}).exit_code, 0);
  }
}

// A mount's metrics: `archil metrics MOUNTPOINT` (text), `archil --json metrics` (the only mount)
// and the daemon's own --metrics-listen endpoint all show the counters moving with what the
// mount did; a path that is no mount is refused.
TEST_F(MountTest, TheMountsMetricsAreReadAndMove) {
  StartServer();
  CreateDisk("metered");
  net::Fd port = net::Listen("127.0.0.1:0").value();
  const std::string http = net::LocalAddress(port.get()).value();
  port = net::Fd();
  Ran m = Mount("metered", {"--metrics-listen", http});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  Ran before = Archil({"metrics", mnt_});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  const double writes_before =
      MetricValue(before.out, R"(archil_client_requests_total{op="WRITE"})");
  EXPECT_GE(writes_before, 0) << before.out;

  {
    const int fd = ::open((mnt_ + "/f").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    const std::string data(1 << 20, 'm');
    ASSERT_EQ(::write(fd, data.data(), data.size()), ssize_t(data.size()));
    ASSERT_EQ(::fsync(fd), 0);
    ::close(fd);
  }
  Ran after = Archil({"metrics", mnt_});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_GT(MetricValue(after.out, R"(archil_client_requests_total{op="WRITE"})"), writes_before);
  EXPECT_GT(MetricValue(after.out, R"(archil_client_request_seconds_count{op="WRITE"})"), 0);
  EXPECT_GE(MetricValue(after.out, "archil_client_written_bytes_total"), 1 << 20);
  EXPECT_GE(MetricValue(after.out, "archil_mount_written_bytes_total"), 1 << 20);
  EXPECT_GT(MetricValue(after.out, "archil_mount_requests_total"), 0);
  EXPECT_EQ(MetricValue(after.out, "archil_client_unreachable"), 0);

  // JSON, from the only mount of the machine.
  Ran j = Archil({"--json", "metrics"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json doc = json::parse(j.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << j.out;
  double requests = -1;
  for (const json& f : doc["families"]) {
    if (f.value("name", "") == "archil_mount_requests_total") {
      requests = f["samples"][0]["value"].get<double>();
    }
  }
  EXPECT_GT(requests, 0) << j.out;

  // The daemon's HTTP endpoint: the same counters.
  const std::string scraped = ScrapeMetrics(http);
  ASSERT_FALSE(scraped.empty());
  EXPECT_GE(MetricValue(scraped, R"(archil_client_requests_total{op="WRITE"})"),
            MetricValue(after.out, R"(archil_client_requests_total{op="WRITE"})"));

  Ran none = Archil({"metrics", dir_.string()});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("not an archil mount"), std::string::npos) << none.err;
}

}  // namespace archil::testing
