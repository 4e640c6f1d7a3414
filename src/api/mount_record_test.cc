#include "api/mount_record.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace archil {
namespace {

TEST(MountRecord, RoundTripsThroughItsFile) {
  std::string dir = "/tmp/archil-mount-record-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  MountRecord r;
  r.mountpoint = "/mnt/a-b/c";
  r.disk = "demo:/src";
  r.disk_id = "dsk-1";
  r.server = "127.0.0.1:8421";
  r.pid = getpid();
  r.mount_ms = 7.25;
  r.bytes_written = 1 << 20;
  r.token_file = "/etc/archil/demo.token";
  r.unsynced = 3;
  r.write_back_errors = 2;
  ASSERT_TRUE(WriteMountRecord(dir, r).ok());
  Result<MountRecord> back = ReadMountRecord(dir, "/mnt/a-b/c");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back.value().disk, "demo:/src");
  EXPECT_EQ(back.value().mount_ms, 7.25);
  EXPECT_EQ(back.value().bytes_written, uint64_t{1} << 20);
  EXPECT_EQ(back.value().token_file, "/etc/archil/demo.token");
  EXPECT_EQ(back.value().unsynced, 3u);
  EXPECT_EQ(back.value().write_back_errors, 2u);
  // A record written before token_file existed: none.
  EXPECT_EQ(ParseMountRecord(R"({"mountpoint":"/m","disk":"d","disk_id":"x","server":"s",)"
                             R"("pid":1})")
                ->token_file,
            "");
  EXPECT_EQ(ListMountRecords(dir).size(), 1u);
  EXPECT_FALSE(ReadMountRecord(dir, "/mnt/a/b-c").ok());  // a different file
  RemoveMountRecord(dir, "/mnt/a-b/c");
  EXPECT_TRUE(ListMountRecords(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST(MountRecord, PathsNeverShareAFile) {
  EXPECT_NE(MountRecordPath("/r", "/mnt/a-b"), MountRecordPath("/r", "/mnt/a/b"));
  EXPECT_NE(MountRecordPath("/r", "/a%2Db"), MountRecordPath("/r", "/a-b"));
}

TEST(MountRecord, BadRecordsAreRefused) {
  EXPECT_FALSE(ParseMountRecord("").ok());
  EXPECT_FALSE(ParseMountRecord("[]").ok());
  EXPECT_FALSE(ParseMountRecord(R"({"mountpoint":"/m"})").ok());
  EXPECT_FALSE(
      ParseMountRecord(R"({"mountpoint":"rel","disk":"d","disk_id":"i","server":"s","pid":1})")
          .ok());
  EXPECT_FALSE(
      ParseMountRecord(R"({"mountpoint":"/m","disk":"d","disk_id":"i","server":"s","pid":"x"})")
          .ok());
  EXPECT_TRUE(
      ParseMountRecord(R"({"mountpoint":"/m","disk":"d","disk_id":"i","server":"s","pid":1})")
          .ok());
}

TEST(MountRecord, NormalizesWithoutTouchingThePath) {
  EXPECT_EQ(NormalizeMountpoint("/mnt//x/./y/../z/"), "/mnt/x/z");
  EXPECT_EQ(NormalizeMountpoint("/"), "/");
  EXPECT_EQ(NormalizeMountpoint("rel")[0], '/');
}

// A process's life as `archil unmount -f` sees it: running, stopped, continued, a zombie.
TEST(MountRecord, ProcessStatesAreReadFromProc) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  // Waits up to 2 s for `want` of ProcessStopped(child) (signals land asynchronously).
  auto stopped_becomes = [&](bool want) {
    for (int i = 0; i < 400 && ProcessStopped(child) != want; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return ProcessStopped(child) == want;
  };
  EXPECT_TRUE(ProcessAlive(child));
  EXPECT_FALSE(ProcessStopped(child));
  kill(child, SIGSTOP);
  EXPECT_TRUE(stopped_becomes(true));
  EXPECT_TRUE(ProcessAlive(child));
  kill(child, SIGCONT);
  EXPECT_TRUE(stopped_becomes(false));
  kill(child, SIGKILL);
  siginfo_t info{};
  // Dead but not reaped: a zombie is not alive.
  ASSERT_EQ(waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);
  EXPECT_FALSE(ProcessAlive(child));
  EXPECT_FALSE(ProcessStopped(child));
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_FALSE(ProcessAlive(child));
  EXPECT_FALSE(ProcessStopped(-1));
}

}  // namespace
}  // namespace archil
