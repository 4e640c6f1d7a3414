#include "base/pass_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace archil {
namespace {

using std::chrono::milliseconds;

// Waits (at most 10 s) until `count` reaches `n`; true if it did.
bool WaitFor(const std::atomic<int>& count, int n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (count.load() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  return count.load() >= n;
}

TEST(PassLoopTest, TheFirstPassWaitsAnIntervalUnlessAskedToRunAtStart) {
  std::atomic<int> waits{0}, eager{0};
  PassLoop a("waits", {.interval_ms = 60'000}, [&] {
    ++waits;
    return Status::Ok();
  });
  PassLoop b("eager", {.interval_ms = 60'000, .first_at_start = true}, [&] {
    ++eager;
    return Status::Ok();
  });
  a.Start();
  b.Start();
  EXPECT_TRUE(WaitFor(eager, 1));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(waits.load(), 0);
  EXPECT_EQ(eager.load(), 1);
}

TEST(PassLoopTest, PassesRunEveryInterval) {
  std::atomic<int> passes{0};
  PassLoop loop("tick", {.interval_ms = 5}, [&] {
    ++passes;
    return Status::Ok();
  });
  loop.Start();
  EXPECT_TRUE(WaitFor(passes, 5));
}

TEST(PassLoopTest, AKickRunsAPassAndABurstOfKicksSettlesIntoOne) {
  std::atomic<int> passes{0};
  PassLoop loop("kicked", {.interval_ms = 60'000, .settle_ms = 200}, [&] {
    ++passes;
    return Status::Ok();
  });
  loop.Start();
  for (int i = 0; i < 10; ++i) {  // spread over half the settle time, each waking the loop
    loop.Kick();
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(WaitFor(passes, 1));
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(passes.load(), 1) << "ten kicks within the settle time make one pass";
  loop.Kick();
  EXPECT_TRUE(WaitFor(passes, 2));
}

TEST(PassLoopTest, AFailedPassIsRetriedAfterTheRetryDelayNotTheInterval) {
  std::atomic<int> passes{0};
  PassLoop loop("flaky", {.interval_ms = 60'000, .retry_ms = 10, .first_at_start = true},
                [&] { return ++passes <= 3 ? Status::Unavailable("not yet") : Status::Ok(); });
  loop.Start();
  EXPECT_TRUE(WaitFor(passes, 4));
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(passes.load(), 4) << "after a pass that succeeded, the next waits the interval";
}

TEST(PassLoopTest, StopJoinsAndNoPassRunsAfterIt) {
  std::atomic<int> passes{0};
  PassLoop loop("stopped", {.interval_ms = 1}, [&] {
    ++passes;
    return Status::Ok();
  });
  loop.Start();
  EXPECT_TRUE(WaitFor(passes, 3));
  loop.Stop();
  const int at_stop = passes.load();
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(passes.load(), at_stop);
  loop.Stop();  // idempotent
}

}  // namespace
}  // namespace archil
