#include "base/owner_watch.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace archil {
namespace {

using Clock = std::chrono::steady_clock;

TEST(OwnerWatch, ParsesOnlyPositivePids) {
  EXPECT_EQ(ParseOwnerPid(nullptr).value(), 0);
  EXPECT_EQ(ParseOwnerPid("").value(), 0);
  EXPECT_EQ(ParseOwnerPid("1234").value(), 1234);
  for (const char* bad : {"0", "-5", "+5", " 5", "5 ", "12x", "99999999999", "abc"}) {
    EXPECT_FALSE(ParseOwnerPid(bad).ok()) << bad;
  }
}

// A flag one thread sets and another waits for.
class Flag {
 public:
  void Set() {
    std::lock_guard<std::mutex> lock(mu_);
    set_ = true;
    cv_.notify_all();
  }
  // Whether it was set within `ms`.
  bool WaitFor(int ms) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return set_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool set_ = false;
};

// A killed owner may wait in an uninterruptible sleep (on a page of the mount its daemon serves)
// with its SIGKILL pending: the watch reads that from /proc/PID/status as its death.
TEST(OwnerWatch, ASigkillPendingInProcStatusCountsAsDeath) {
  EXPECT_TRUE(
      StatusShowsKill("Name:\tt\nState:\tD (disk sleep)\nSigQ:\t0/1\n"
                      "SigPnd:\t0000000000000100\nShdPnd:\t0000000000000100\n"));
  EXPECT_TRUE(StatusShowsKill("ShdPnd:\t0000000000000100\nSigBlk:\t0000000000000000\n"));
  EXPECT_TRUE(StatusShowsKill("SigPnd:\t0000000000000300\n"));  // SIGKILL and SIGUSR1
  EXPECT_FALSE(StatusShowsKill("SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"));
  EXPECT_FALSE(StatusShowsKill("SigPnd:\t0000000000004000\n"));  // SIGTERM only
  EXPECT_FALSE(StatusShowsKill("SigPnd:\t0000000000000200\n"));  // SIGUSR1 only
  EXPECT_FALSE(StatusShowsKill("SigBlk:\t0000000000000100\n"));  // blocked is not pending
  EXPECT_FALSE(StatusShowsKill(""));
  EXPECT_FALSE(StatusShowsKill("SigPnd:\t1\n"));  // too short to hold signal 9
}

TEST(OwnerWatch, CallsBackWithinTheBoundOfTheOwnersDeath) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  Flag died;
  OwnerWatch watch(child, [&] { died.Set(); });
  EXPECT_FALSE(died.WaitFor(300)) << "called back while the owner lives";
  const auto killed = Clock::now();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(died.WaitFor(5000));
  EXPECT_LT(Clock::now() - killed, std::chrono::milliseconds(1000));
}

TEST(OwnerWatch, AnOwnerAlreadyGoneCallsBackAtOnce) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  Flag died;
  OwnerWatch watch(child, [&] { died.Set(); });
  EXPECT_TRUE(died.WaitFor(2000));
}

TEST(OwnerWatch, ADestroyedWatchNeverCallsBack) {
  bool called = false;
  {
    OwnerWatch watch(getpid(), [&] { called = true; });
  }
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace archil
