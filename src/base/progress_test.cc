#include "base/progress.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace archil {
namespace {

TEST(FormatProgress, CountsPercentRateAndTimeLeft) {
  EXPECT_EQ(FormatProgress("log objects", 3, 0, 0, 0), "log objects 3");
  EXPECT_EQ(FormatProgress("log objects", 3, 12, 0, 0), "log objects 3 of 12 (25 %)");
  // 12 of 80 after 6 s: 68 left at 2 per second.
  EXPECT_EQ(FormatProgress("segments", 12, 80, uint64_t{3} << 30, 6'000'000'000),
            "segments 12 of 80 (15 %), 3.0 GiB at 512.0 MiB/s, about 34 s left");
  // No rate or time left in the first half second, none left when done.
  EXPECT_EQ(FormatProgress("segments", 1, 80, 812, 100'000'000), "segments 1 of 80 (1 %), 812 B");
  EXPECT_EQ(FormatProgress("segments", 80, 80, 4096, 2'000'000'000),
            "segments 80 of 80 (100 %), 4.0 KiB at 2.0 KiB/s");
  // A count past its total (a total that was an estimate) says 100 %.
  EXPECT_EQ(FormatProgress("x", 9, 8, 0, 0), "x 9 of 8 (100 %)");
}

// What a TerminalProgress writes, read back from a file standing in for the terminal.
class TerminalProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/progress_test.XXXXXX";
    fd_ = ::mkstemp(name);
    ASSERT_GE(fd_, 0);
    ::unlink(name);
  }
  void TearDown() override { ::close(fd_); }
  std::string Written() {
    std::string out(static_cast<size_t>(::lseek(fd_, 0, SEEK_END)), '\0');
    EXPECT_EQ(::pread(fd_, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
    return out;
  }

  int fd_ = -1;
  FakeClock clock_;
};

TEST_F(TerminalProgressTest, RewritesOneLinePerTaskAtMostEveryInterval) {
  {
    TerminalProgress p(fd_, "recovery", &clock_, /*interval_ms=*/200);
    p.Update("log objects", 1, 3, 0);  // the first of a task is shown at once
    clock_.Advance(50'000);
    p.Update("log objects", 2, 3, 0);  // 50 ms later: skipped
    p.Update("log objects", 3, 3, 0);  // the last is shown at once
    clock_.Advance(1'000'000);
    p.Update("segments", 1, 2, 100);  // a new task: a new line
    clock_.Advance(300'000);
    p.Update("segments", 1, 2, 300);  // 300 ms later: shown
    clock_.Advance(100'000);
    p.Update("segments", 1, 2, 350);  // skipped, then shown by Finish (the destructor)
  }
  EXPECT_EQ(Written(),
            "\rrecovery: log objects 1 of 3 (33 %)\x1b[K"
            "\rrecovery: log objects 3 of 3 (100 %)\x1b[K\n"
            "\rrecovery: segments 1 of 2 (50 %), 100 B\x1b[K"
            "\rrecovery: segments 1 of 2 (50 %), 300 B\x1b[K"
            "\rrecovery: segments 1 of 2 (50 %), 350 B\x1b[K\n");
}

TEST_F(TerminalProgressTest, ReportsOutOfOrderNeverGoBack) {
  TerminalProgress p(fd_, "r", &clock_, /*interval_ms=*/0);
  p.Update("s", 5, 10, 500);
  p.Update("s", 4, 10, 400);    // a slower thread's older count
  p.Update("s", 10, 10, 1000);  // the last ends the line at once
  p.Update("s", 9, 10, 900);    // and nothing after it shows
  p.Finish();
  EXPECT_EQ(Written(),
            "\rr: s 5 of 10 (50 %), 500 B\x1b[K"
            "\rr: s 5 of 10 (50 %), 500 B\x1b[K"
            "\rr: s 10 of 10 (100 %), 1000 B\x1b[K\n");
}

TEST_F(TerminalProgressTest, FinishWithoutUpdatesWritesNothing) {
  TerminalProgress p(fd_, "r", &clock_);
  p.Finish();
  EXPECT_EQ(Written(), "");
}

TEST(TerminalProgress, OnlyOnATerminal) {
  FakeClock clock;
  const int fd = ::open("/dev/null", O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(TerminalProgress::IfTerminal(fd, "r", &clock), nullptr);
  ::close(fd);
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  EXPECT_EQ(TerminalProgress::IfTerminal(pipefd[1], "r", &clock), nullptr);
  ::close(pipefd[0]);
  ::close(pipefd[1]);
  const int tty = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (tty < 0) GTEST_SKIP() << "no pseudo-terminal here";
  ASSERT_EQ(::grantpt(tty), 0);
  ASSERT_EQ(::unlockpt(tty), 0);
  const int pts = ::open(::ptsname(tty), O_WRONLY | O_NOCTTY);
  ASSERT_GE(pts, 0);
  EXPECT_NE(TerminalProgress::IfTerminal(pts, "r", &clock), nullptr);
  ::close(pts);
  ::close(tty);
}

}  // namespace
}  // namespace archil
